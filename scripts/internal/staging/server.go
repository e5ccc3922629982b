package staging

import (
	"bytes"
	"context"
	"fmt"

	"appwrite-agent/shared/devkit/runtimebuild"
)

// TypesForGoVersion is the types-for-go version the runtime's server module requires.
const TypesForGoVersion = runtimebuild.TypesForGoVersion

// BuildServer builds the runtime server for a staged function folder the way the open-runtimes Go image
// does (runtimebuild.BuildServer): a separate module openruntimes/server in workDir that replaces
// openruntimes/handler v0.0.0 with stagedDir, then `go get openruntimes/handler@v0.0.0` and
// `go build -ldflags="-s -w"`, outside any workspace. The binary is written to binPath. The server's
// contract code is shared/devkit/localruntime as compiled into this program (runtimebuild embeds it); root is
// no longer read and stays only so that callers keep their signature.
func BuildServer(ctx context.Context, root, stagedDir, workDir, binPath string) error {
	_ = root
	var out bytes.Buffer
	if err := runtimebuild.BuildServer(ctx, stagedDir, workDir, binPath, nil, &out); err != nil {
		return fmt.Errorf("%w\n%s", err, out.String())
	}
	return nil
}
