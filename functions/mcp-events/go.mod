module appwrite-agent/functions/mcp-events

go 1.25.5

require appwrite-agent/shared v0.0.0

replace appwrite-agent/shared => ../../shared

require (
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/google/jsonschema-go v0.4.3
	github.com/mark3labs/mcp-go v1.2.1
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/open-runtimes/types-for-go/v4 v4.0.8
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
	golang.org/x/oauth2 v0.35.0
)

require (
	github.com/appwrite/sdk-for-go v1.0.0 // indirect
	github.com/coder/websocket v1.8.14 // indirect
	github.com/getsentry/sentry-go v0.46.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/net v0.55.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
	golang.org/x/text v0.37.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
