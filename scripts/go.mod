module appwrite-agent/scripts

go 1.25.5

require (
	appwrite-agent/shared v0.0.0
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/chromedp/chromedp v0.23.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
)

require (
	github.com/appwrite/sdk-for-go v1.0.0
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	github.com/open-runtimes/types-for-go/v4 v4.0.8 // indirect
)

replace appwrite-agent/shared => ../shared
