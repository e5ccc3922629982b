module appwrite-agent/functions/webhook-ingress

go 1.25.5

require appwrite-agent/shared v0.0.0

replace appwrite-agent/shared => ../../shared

require github.com/open-runtimes/types-for-go/v4 v4.0.8

require github.com/appwrite/sdk-for-go v1.0.0 // indirect
