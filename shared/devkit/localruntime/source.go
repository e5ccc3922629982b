package localruntime

import "embed"

// Source holds this package's Go files (tests included), so that a runtime server module can be written
// anywhere from the binary itself: shared/devkit/runtimebuild copies the non-test files into the server module's
// localruntime package, as the open-runtimes Go image ships its own server code.
//
//go:embed *.go
var Source embed.FS
