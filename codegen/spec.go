package codegen

import "github.com/dtrace-go/dtrace/program"

// The compiled program's description lives in package program; these
// names let the generator keep its spelling while the move settles.
type (
	Spec          = program.Spec
	MapKind       = program.MapKind
	MapSpec       = program.MapSpec
	ClauseSpec    = program.ClauseSpec
	RecordSpec    = program.RecordSpec
	ScratchLayout = program.ScratchLayout
	Record        = program.Record
	Action        = program.Action
	ValueKind     = program.ValueKind
	AggSpec       = program.AggSpec
	Type          = program.Type
	TypeKind      = program.TypeKind
	EnumConst     = program.EnumConst
	Field         = program.Field
)

// Constants of package program, by their old names.
const (
	MapArray          = program.MapArray
	MapPerCPUArray    = program.MapPerCPUArray
	MapHash           = program.MapHash
	MapPerCPUHash     = program.MapPerCPUHash
	MapPerfEventArray = program.MapPerfEventArray
	MapRingBuf        = program.MapRingBuf
	MapLRUHash        = program.MapLRUHash
	MapArrayOfMaps    = program.MapArrayOfMaps
	ActNone           = program.ActNone
	ActArg            = program.ActArg
	ActTrace          = program.ActTrace
	ActPrintf         = program.ActPrintf
	ActPrinta         = program.ActPrinta
	ActPrint          = program.ActPrint
	ActTracemem       = program.ActTracemem
	ActExit           = program.ActExit
	ActStack          = program.ActStack
	ActUStack         = program.ActUStack
	ActClear          = program.ActClear
	ActTrunc          = program.ActTrunc
	ActNormalize      = program.ActNormalize
	ActDenormalize    = program.ActDenormalize
	ActSetopt         = program.ActSetopt
	ActCommit         = program.ActCommit
	ActDiscard        = program.ActDiscard
	ActSpeculate      = program.ActSpeculate
	ActPrintm         = program.ActPrintm
	ActSystem         = program.ActSystem
	ActRaise          = program.ActRaise
	ActFtruncate      = program.ActFtruncate
	ActFreopen        = program.ActFreopen
	ActSym            = program.ActSym
	ActUSym           = program.ActUSym
	ActMod            = program.ActMod
	ActUMod           = program.ActUMod
	ActBreakpoint     = program.ActBreakpoint
	ActPanic          = program.ActPanic
	ActStop           = program.ActStop
	ActSnapshot       = program.ActSnapshot
	ActTraceoff       = program.ActTraceoff
	ActTraceon        = program.ActTraceon
	ActChill          = program.ActChill
	KindNone          = program.KindNone
	KindSigned        = program.KindSigned
	KindUnsigned      = program.KindUnsigned
	KindString        = program.KindString
	KindBytes         = program.KindBytes
	KindStack         = program.KindStack
	KindUStack        = program.KindUStack
	KindSym           = program.KindSym
	KindMod           = program.KindMod
	KindUSym          = program.KindUSym
	KindUMod          = program.KindUMod
	KindUAddr         = program.KindUAddr
	TVoid             = program.TVoid
	TInt              = program.TInt
	TPointer          = program.TPointer
	TString           = program.TString
	TArray            = program.TArray
	TStruct           = program.TStruct
	TFunc             = program.TFunc
)

// Common types of package program.
var (
	TypeChar   = program.TypeChar
	TypeUChar  = program.TypeUChar
	TypeShort  = program.TypeShort
	TypeUShort = program.TypeUShort
	TypeInt    = program.TypeInt
	TypeUInt   = program.TypeUInt
	TypeLong   = program.TypeLong
	TypeULong  = program.TypeULong
	TypeVoid   = program.TypeVoid
)
