// Package clipush proves the deploy path with the real Appwrite CLI: its test (clipush_test.go) stages the
// five functions, points appwrite-cli 12.0.1 (a Node.js test peer: scripts/install-node-peers) at the local
// Appwrite stand-in with an API key, runs `appwrite push functions --all --force`, and checks that every
// deployment is ready and answers GET /health over its function domain. It skips, saying why, when the
// Node.js test peers are not installed. See docs/deploy.md, "Proving the deploy path".
package clipush
