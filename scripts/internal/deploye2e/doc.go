// Package deploye2e proves scripts/deploy end to end: its test (deploy_test.go) deploys the five staged
// functions with the deploy package to an empty project of the local Appwrite stand-in, with an API key only,
// then uses what it deployed (a new user's chat turn on the chat domain, an event delivered through
// mcp-events and webhook-ingress), runs deploy again (up to date), and changes one function (only it is
// redeployed). See docs/deploy.md, "Proving scripts/deploy". This package ships nothing.
package deploye2e
