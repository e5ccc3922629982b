package threat_test

import (
	"fmt"

	"appwrite-agent/shared/protocol/threat"
)

func ExampleResult() {
	fmt.Println(threat.Result(`{"category": "Illegal", "summary": "Asked for working ransomware", "details": "The user asked for ransomware to deploy against a hospital.", "quote": ""}`))
	fmt.Println(threat.Result(`{"category": "rude", "summary": "s", "details": "d"}`))
	// Output:
	// {"protocol":"appwrite.threat/v1","category":"illegal","summary":"Asked for working ransomware","details":"The user asked for ransomware to deploy against a hospital."}
	// Error: invalid threat report — category must be one of ['illegal', 'immoral']; got 'rude'
}
