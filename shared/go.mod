module appwrite-agent/shared

go 1.25.5

require (
	github.com/appwrite/sdk-for-go v1.0.0
	github.com/chromedp/chromedp v0.23.0
	github.com/coder/websocket v1.8.14
	github.com/getsentry/sentry-go v0.46.2
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/open-runtimes/types-for-go/v4 v4.0.8
	github.com/sashabaranov/go-openai v1.43.0
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
	golang.org/x/net v0.55.0
	golang.org/x/sys v0.45.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	golang.org/x/text v0.37.0 // indirect
)
