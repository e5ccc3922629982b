package turnrequest_test

import (
	"fmt"

	"appwrite-agent/shared/turnrequest"
)

func ExampleValidTurnID() {
	for _, id := range []string{"turn-1", "T_2", "_hidden", "", "a b", "x23456789012345678901234567890123456", "x234567890123456789012345678901234567"} {
		fmt.Printf("%q %v\n", id, turnrequest.ValidTurnID(id))
	}
	// Output:
	// "turn-1" true
	// "T_2" true
	// "_hidden" false
	// "" false
	// "a b" false
	// "x23456789012345678901234567890123456" true
	// "x234567890123456789012345678901234567" false
}
