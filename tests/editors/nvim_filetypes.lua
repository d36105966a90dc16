-- Driven by tests/editors/test_nvim.py: open each file of $HLO_PROBE_SPEC's `paths` as a user
-- would (:edit), record the filetype Neovim gave it, wipe the buffer. Writes {filetypes = {...},
-- clients = n} to the spec's `out` (clients: running LSP clients at the end, expected 0 with
-- vim.g.hlo_no_autosetup = 1).
local spec = vim.fn.json_decode(table.concat(vim.fn.readfile(vim.env.HLO_PROBE_SPEC), '\n'))
local result = { filetypes = {} }
for i, path in ipairs(spec.paths) do
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  result.filetypes[i] = vim.bo.filetype
  vim.cmd('bwipeout!')
end
local clients = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
result.clients = #clients
local f = assert(io.open(spec.out, 'w'))
f:write(vim.fn.json_encode(result))
f:close()
vim.cmd('qall!')
