module openruntimes/handler

go 1.25.5

require github.com/open-runtimes/types-for-go/v4 v4.0.8
