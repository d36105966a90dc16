" Vim syntax file for XLA buffer-assignment dumps (filetype hlo_buffers; see :help hlo):
" the old single file and the split -buffer-assignment, -values, -live-range and
" -memory-usage-report files.
if exists('b:current_syntax')
  finish
endif

syn case match

" section headers
syn match hloBufHeader /^\s*\%(BufferAssignment\|Used values\|Total bytes used\|HloLiveRange\|InstructionSequence\|BufferLiveRange\|Live ranges at peak\|Memory Space\|Total bytes\|BufferAssignment stats\|BufferAssignment peak memory\|positions\|uses\|from instruction\)\ze\%(:\| (\)/
syn match hloBufAllocation /^allocation \d\+/
syn match hloBufValueKey /^\s*value:/
" <5 broadcast_add_fusion @0>
syn match hloBufValue /<\d\+ [^>]*>/
syn match hloBufType /\<\%(pred\|token\|[suf]\d\+\|bf16\|c64\|c128\|f8e\w\+\|f4e\w\+\)\ze\[/
syn match hloBufAttribute /\<[A-Za-z_][A-Za-z0-9_\-]*\ze=/
syn match hloBufNumber /\<\d\+\%(\.\d\+\)\?\%([KMGT]\?i\?B\)\?\>/
syn match hloBufName /%[A-Za-z0-9_.\-]\+/

hi def link hloBufHeader Title
hi def link hloBufAllocation Statement
hi def link hloBufValueKey Label
hi def link hloBufValue Identifier
hi def link hloBufType Type
hi def link hloBufAttribute PreProc
hi def link hloBufNumber Number
hi def link hloBufName Identifier

let b:current_syntax = 'hlo_buffers'
