//go:build tools

// Package tools records the program this module builds, so that `go mod tidy` keeps it.
package tools

import _ "sigs.k8s.io/kustomize/kustomize/v5"
