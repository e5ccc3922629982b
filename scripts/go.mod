module appwrite-agent/scripts

go 1.25.5

require appwrite-agent/shared v0.0.0

require github.com/appwrite/sdk-for-go v1.0.0 // indirect

replace appwrite-agent/shared => ../shared
