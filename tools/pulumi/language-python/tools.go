//go:build tools

// Package tools pins the Python language host so `go build` resolves it from this module's go.mod.
package tools

import (
	_ "github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3"
)
