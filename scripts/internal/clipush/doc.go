// Package clipush proves the deploy path with the real Appwrite CLI: its test (clipush_test.go) stages the
// five functions, points appwrite-cli 12.0.1 (installed with npm into .tools/appwrite-cli) at the local
// Appwrite stand-in with an API key, runs `appwrite push functions --all --force`, and checks that every
// deployment is ready and answers GET /health over its function domain. It skips when Node.js or npm is
// missing. See docs/deploy.md, "Proving the deploy path".
package clipush
