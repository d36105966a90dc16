-- HLO module text: comments are /* ... */ (XLA prints /*index=N*/ in long lists).
vim.bo.commentstring = '/* %s */'
vim.b.undo_ftplugin = (vim.b.undo_ftplugin and vim.b.undo_ftplugin .. ' | ' or '') .. 'setlocal commentstring<'
