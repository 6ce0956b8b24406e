#if canImport(Glibc)
import Glibc
#endif

// Usage (see scripts/fuzz.sh): castline-fuzz TARGET [libFuzzer flags] [corpus dirs]
// TARGET is one of FuzzTargets.names.

func printError(_ line: String) {
    let text = line + "\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}

#if FUZZING
nonisolated(unsafe) var selectedTarget = ""

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTargets.run(selectedTarget, UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

let arguments = CommandLine.arguments
guard arguments.count >= 2, FuzzTargets.names.contains(arguments[1]) else {
    printError("usage: castline-fuzz {\(FuzzTargets.names.joined(separator: "|"))} [libFuzzer options] [corpus...]")
    exit(2)
}
selectedTarget = arguments[1]
var forwarded: [UnsafeMutablePointer<CChar>?] = ([arguments[0]] + arguments.dropFirst(2)).map { strdup($0) } + [nil]
var count = CInt(forwarded.count - 1)
let status = forwarded.withUnsafeMutableBufferPointer { buffer -> CInt in
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = buffer.baseAddress
    return LLVMFuzzerRunDriver(&count, &argv, fuzzOneInput)
}
exit(status)
#else
printError("castline-fuzz: built without -DFUZZING; use scripts/fuzz.sh TARGET SECONDS")
exit(2)
#endif
