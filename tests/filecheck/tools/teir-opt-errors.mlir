// teir-opt's error paths: one `teir-opt: error:` diagnostic naming the bad
// thing, a non-zero exit, never a traceback.

// Bad input IR, records and files.
// RUN: not teir-opt %S/Inputs/bad-guard.mlir 2>&1 | filecheck %s --check-prefix=VERIFY
// VERIFY-NOT: Traceback
// VERIFY: teir-opt: error: guard rule: guard of invocation 'zero' names axis 't', which no ancestor of 'zero' iterates
// VERIFY-NOT: Traceback

// xDSL's verifier messages name no op: the line after names the one it underlines.
// RUN: not teir-opt %S/Inputs/bad-linalg-rank.mlir 2>&1 | filecheck %s --check-prefix=XDSLVERIFY
// XDSLVERIFY:      teir-opt: error: expected operand #0 of rank 2 to match the result count of indexing_map #0, 1
// XDSLVERIFY-NEXT:   in: "linalg.generic"(%A, %B) <{indexing_maps = [affine_map<(d0, d1) -> (d0)>
// XDSLVERIFY-NOT: Traceback

// RUN: not teir-opt %S/Inputs/parse-error.mlir 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE-NOT: Traceback
// PARSE: teir-opt: error:
// PARSE: expected an id
// PARSE-NOT: Traceback

// Text on which xDSL's parser raises plain exceptions (IndexError inside its
// linalg parser, which TEIR's linalg.matmul now diagnoses) or would recurse past
// Python's limit: parse errors at their place (--parsing-diagnostics prints each
// and goes on to the next chunk).
// RUN: teir-opt %S/Inputs/bad-parse.mlir --split-input-file --parsing-diagnostics 2>&1 | filecheck %s --check-prefix=XDSLPARSE
// XDSLPARSE-NOT: Traceback
// XDSLPARSE:      bad-parse.mlir:4:17
// XDSLPARSE:      linalg.matmul: indexing_maps must be a list of three affine maps (a, b, out)
// XDSLPARSE:      bad-parse.mlir:9:67
// XDSLPARSE:      Expected '=' after operation result list
// XDSLPARSE:      bad-parse.mlir:15:24
// XDSLPARSE:      integer range: an extent must fit in 64 bits
// XDSLPARSE:      bad-parse.mlir:22:15
// XDSLPARSE:      id rule: an id is Unicode text, and this string literal's bytes are not UTF-8
// XDSLPARSE:      bad-parse.mlir:29:322
// XDSLPARSE:      nesting depth: this bracket opens level 257; TEIR reads MLIR nested at most 256 deep
// XDSLPARSE-NOT: Traceback
// Unsplit, the nesting scan of the whole text refuses it before xDSL parses anything.
// RUN: not teir-opt %S/Inputs/bad-parse.mlir 2>&1 | filecheck %s --check-prefix=XDSLPARSE1
// XDSLPARSE1:     teir-opt: error: {{.*}}bad-parse.mlir:29:322
// XDSLPARSE1:     nesting depth: this bracket opens level 257
// XDSLPARSE1-NOT: internal error

// RUN: not teir-opt %S/Inputs/bad-syntax.json 2>&1 | filecheck %s --check-prefix=JSON
// JSON-NOT: Traceback
// JSON: teir-opt: error: record form: invalid JSON at line 1 column 38: Expecting value
// JSON-NOT: Traceback

// A .json file holding one line, no newline, that is no record (its text is no
// path to read)
// RUN: not teir-opt %S/Inputs/not-json.json 2>&1 | filecheck %s --check-prefix=NOTJSON
// NOTJSON: teir-opt: error: record form: invalid JSON at line 1 column 1: Expecting value
// NOTJSON-NOT: cannot read

// RUN: not teir-opt %S/Inputs/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING-NOT: Traceback
// MISSING: teir-opt: error: cannot read {{.*}}does-not-exist.mlir: No such file or directory
// MISSING-NOT: Traceback

// A path that cannot be opened (a file used as a directory).
// RUN: not teir-opt %s/child.mlir 2>&1 | filecheck %s --check-prefix=UNREADABLE
// UNREADABLE-NOT: Traceback
// UNREADABLE: teir-opt: error: cannot read {{.*}}teir-opt-errors.mlir/child.mlir: Not a directory
// UNREADABLE-NOT: Traceback

// RUN: not teir-opt %S/Inputs 2>&1 | filecheck %s --check-prefix=DIRECTORY
// DIRECTORY-NOT: Traceback
// DIRECTORY: teir-opt: error: cannot read {{.*}}Inputs: it is a directory, not a file
// DIRECTORY-NOT: Traceback

// RUN: not teir-opt %S/Inputs/empty.mlir 2>&1 | filecheck %s --check-prefix=EMPTY
// EMPTY-NOT: Traceback
// EMPTY: teir-opt: error: {{.*}}empty.mlir is empty; expected MLIR
// EMPTY-NOT: Traceback

// RUN: not teir-opt %S/Inputs/empty.json 2>&1 | filecheck %s --check-prefix=EMPTYJSON
// EMPTYJSON-NOT: Traceback
// EMPTYJSON: teir-opt: error: {{.*}}empty.json is empty; expected a JSON record
// EMPTYJSON-NOT: Traceback

// RUN: not teir-opt < %S/Inputs/empty.mlir 2>&1 | filecheck %s --check-prefix=STDIN
// STDIN-NOT: Traceback
// STDIN: teir-opt: error: stdin is empty; expected MLIR
// STDIN-NOT: Traceback

// RUN: not teir-opt %S/Inputs/not-utf8.mlir 2>&1 | filecheck %s --check-prefix=UTF8
// UTF8-NOT: Traceback
// UTF8: teir-opt: error: cannot read {{.*}}not-utf8.mlir: not UTF-8 text (invalid start byte at byte 16)
// UTF8-NOT: Traceback

// An unknown extension needs -f; with -f json the same file reads as a record.
// RUN: not teir-opt %S/Inputs/record.txt 2>&1 | filecheck %s --check-prefix=EXTENSION
// EXTENSION-NOT: Traceback
// EXTENSION: teir-opt: error: cannot tell the form of {{.*}}record.txt from its extension 'txt': name it .mlir or .json, or pass -f mlir|json
// EXTENSION-NOT: Traceback
// RUN: teir-opt -f json %S/Inputs/record.txt --emit=tree | filecheck %s --check-prefix=FRONTEND
// FRONTEND: x
// FRONTEND-NEXT: └── op -> p

// RUN: not teir-opt %s -o %S/Inputs 2>&1 | filecheck %s --check-prefix=OUTPUT
// OUTPUT-NOT: Traceback
// OUTPUT: teir-opt: error: cannot write {{.*}}Inputs: it is a directory, not a file
// OUTPUT-NOT: Traceback

// Bad flags: argparse's usage line, then the error (exit code 2).
// RUN: not teir-opt %s --no-such-flag 2>&1 | filecheck %s --check-prefix=FLAG
// FLAG: usage: teir-opt
// FLAG: teir-opt: error: unrecognized arguments: --no-such-flag
// FLAG-NOT: Traceback
// RUN: not teir-opt %s --emit=bogus 2>&1 | filecheck %s --check-prefix=EMIT
// EMIT: teir-opt: error: argument --emit: invalid choice: 'bogus'
// EMIT-NOT: Traceback
// RUN: not teir-opt %s -t no-such-target 2>&1 | filecheck %s --check-prefix=TARGET
// TARGET: teir-opt: error: argument -t/--target: invalid choice: 'no-such-target'
// TARGET-NOT: Traceback
// RUN: not teir-opt %s -t "teir-json{" 2>&1 | filecheck %s --check-prefix=TARGETSPEC
// TARGETSPEC-NOT: Traceback
// TARGETSPEC: teir-opt: error: bad target -t:
// TARGETSPEC: Expected argument name here
// TARGETSPEC-NOT: Traceback

// Bad pass names, options and pipelines.
// RUN: not teir-opt -p no-such-pass %s 2>&1 | filecheck %s --check-prefix=PASS
// PASS-NOT: Traceback
// PASS: teir-opt: error: unknown pass 'no-such-pass' in -p 'no-such-pass' (teir-opt --help lists the passes)
// PASS-NOT: Traceback
// RUN: not teir-opt -p "teir-to-scf{bogus=1}" %s 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION-NOT: Traceback
// OPTION: teir-opt: error: unknown option 'bogus' of pass 'teir-to-scf' (its options: microkernels)
// OPTION-NOT: Traceback
// RUN: not teir-opt -p "teir-to-scf{microkernels=maybe}" %s 2>&1 | filecheck %s --check-prefix=OPTIONTYPE
// OPTIONTYPE-NOT: Traceback
// OPTIONTYPE: teir-opt: error: bad options for pass 'teir-to-scf': Incompatible types: given ('maybe',)
// OPTIONTYPE-NOT: Traceback
// RUN: not teir-opt -p "teir-to-scf{" %s 2>&1 | filecheck %s --check-prefix=PIPELINE
// PIPELINE-NOT: Traceback
// PIPELINE: teir-opt: error: bad pass pipeline -p 'teir-to-scf{':
// PIPELINE: Expected argument name here
// PIPELINE-NOT: Traceback
// RUN: not teir-opt -p "teir-to-scf,," %s 2>&1 | filecheck %s --check-prefix=PIPELINE2
// PIPELINE2-NOT: Traceback
// PIPELINE2: teir-opt: error: bad pass pipeline -p 'teir-to-scf,,':
// PIPELINE2: Expected pass name here
// PIPELINE2-NOT: Traceback

// -t llvm (xDSL's LLVM IR target) needs the llvm dialect: an unlowered module
// is a diagnostic naming the pipeline that produces it, not an internal error.
// RUN: not teir-opt %s -t llvm 2>&1 | filecheck %s --check-prefix=LLVM
// LLVM-NOT: Traceback
// LLVM: teir-opt: error: -t llvm prints LLVM IR from the llvm dialect, but the module still holds func.func, func.return, teir.axis, teir.config, ...; lower it first with -p teir-to-llvm (teir-opt FILE -p teir-to-llvm -t llvm)
// LLVM-NOT: Traceback
// RUN: not teir-opt %s -p teir-to-scf -t llvm 2>&1 | filecheck %s --check-prefix=HALFWAY
// HALFWAY-NOT: Traceback
// HALFWAY: teir-opt: error: -t llvm prints LLVM IR from the llvm dialect, but the module still holds arith.
// HALFWAY-SAME: lower it first with -p teir-to-llvm
// RUN: teir-opt %s -p teir-to-llvm -t llvm | filecheck %s --check-prefix=LLVMIR
// LLVMIR: define void @"perm"(ptr noalias %".1", ptr noalias %".2")

func.func @perm(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [12, 4] offsets [0, 0]
    teir.axis bb extent 3 strides [4, 8] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over bb {
          teir.invoke copy -> copy_scalar
        }
      }
    }
  }
  func.return
}
