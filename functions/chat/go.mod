module appwrite-agent/functions/chat

go 1.25.5

require appwrite-agent/shared v0.0.0

replace appwrite-agent/shared => ../../shared

require (
	github.com/appwrite/sdk-for-go v1.0.0
	github.com/open-runtimes/types-for-go/v4 v4.0.8
)

require (
	github.com/coder/websocket v1.8.14 // indirect
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	golang.org/x/net v0.55.0 // indirect
)
