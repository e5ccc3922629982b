// Package chatpage tests the chat page (functions/chat/web) in a real headless Chromium, through the local
// stack scripts/dev runs: the stand-in, the staged functions (chat serving the built page on its function
// domain, turn, title) and a scripted model. The tests are in chatpage_test.go; this package ships nothing.
package chatpage
