package codegen

import "github.com/dtrace-go/dtrace/internal/abi"

// FaultRecordSize is abi.FaultRecordSize.
// For the consumer until it imports internal/abi.
const FaultRecordSize = abi.FaultRecordSize
