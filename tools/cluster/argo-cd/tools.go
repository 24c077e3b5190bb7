//go:build tools

// Package tools records the two programs this module builds, so that `go mod tidy` keeps them.
package tools

import (
	_ "github.com/argoproj/argo-cd/v3/cmd"
	_ "github.com/argoproj/argo-cd/v3/hack/dev-mounter"
)
