module appwrite-agent/scripts

go 1.25.5

require (
	appwrite-agent/shared v0.0.0
	github.com/chromedp/chromedp v0.23.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
	golang.org/x/oauth2 v0.35.0
)

require (
	github.com/coder/websocket v1.8.14 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/net v0.55.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

require (
	github.com/chromedp/cdproto v0.159.0
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/sashabaranov/go-openai v1.43.0 // indirect
)

require (
	appwrite-agent/functions/turn v0.0.0
	github.com/appwrite/sdk-for-go v1.0.0
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/open-runtimes/types-for-go/v4 v4.0.8 // indirect
)

replace appwrite-agent/shared => ../shared

replace appwrite-agent/functions/turn => ../functions/turn
