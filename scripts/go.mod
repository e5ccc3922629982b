module appwrite-agent/scripts

go 1.25.5

require appwrite-agent/shared v0.0.0

replace appwrite-agent/shared => ../shared
