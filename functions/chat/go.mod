module appwrite-agent/functions/chat

go 1.25.5

require appwrite-agent/shared v0.0.0

replace appwrite-agent/shared => ../../shared

require github.com/open-runtimes/types-for-go/v4 v4.0.8
