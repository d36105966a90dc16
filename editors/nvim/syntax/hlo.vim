" Vim syntax file for XLA HLO module text (filetype hlo; see :help hlo).
" Light highlighting: names, shapes, opcodes, attributes, strings, comments.
" The language server gives everything else (hover, diagnostics, navigation).
if exists('b:current_syntax')
  finish
endif

syn case match

syn keyword hloKeyword HloModule ENTRY ROOT
syn keyword hloBoolean true false
syn keyword hloSection FileNames FunctionNames FileLocations StackFrames

" %name, and bare names on the left of '=' (the newer style without '%')
syn match hloName /%[A-Za-z0-9_.\-]\+/
syn match hloDefinition /^\s*\%(ROOT\s\+\)\?\zs[A-Za-z_][A-Za-z0-9_.\-]*\ze\s\+=\s/

" element types followed by dimensions: f32[128,64], pred[], (tuples use these too)
syn match hloType /\<\%(pred\|token\|opaque\|[suf]\d\+\|bf16\|c64\|c128\|f8e\w\+\|f4e\w\+\)\ze\[/
syn keyword hloType token opaque

" opcode: an identifier directly followed by '(' after a shape
syn match hloOpcode /\<[a-z][a-z0-9\-]*\ze(/

" attribute keys: metadata=, calls=, kind=, dimensions=...
syn match hloAttribute /\<[A-Za-z_][A-Za-z0-9_]*\ze=/

syn match hloNumber /\<-\?\d\+\%(\.\d\+\)\?\%([eE][-+]\?\d\+\)\?\>/
syn region hloString start=/"/ skip=/\\./ end=/"/ oneline
syn region hloComment start=+/\*+ end=+\*/+
syn match hloComment +//.*$+

hi def link hloKeyword Keyword
hi def link hloBoolean Boolean
hi def link hloSection Title
hi def link hloName Identifier
hi def link hloDefinition Identifier
hi def link hloType Type
hi def link hloOpcode Function
hi def link hloAttribute PreProc
hi def link hloNumber Number
hi def link hloString String
hi def link hloComment Comment

let b:current_syntax = 'hlo'
