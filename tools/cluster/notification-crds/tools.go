//go:build tools

// Package tools pins controller-gen and the notification-controller API types it reads: `make setup`
// generates the Alert, Provider and Receiver CRDs from them into .tools/cluster/crds, as upstream makes
// them (the controller's own module is not served by the module proxy; its API module is).
package tools

import (
	_ "github.com/fluxcd/notification-controller/api/v1"
	_ "github.com/fluxcd/notification-controller/api/v1beta3"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
