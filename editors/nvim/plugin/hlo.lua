-- hlo.nvim entry point: filetype rules always; the server with default options
-- unless the user called require('hlo').setup{} already or set
-- vim.g.hlo_no_autosetup = 1 (then call setup{} yourself).
if vim.g.loaded_hlo then
  return
end
vim.g.loaded_hlo = 1
if vim.fn.has('nvim-0.7') ~= 1 then
  vim.notify('hlo.nvim needs Neovim 0.7 or later', vim.log.levels.WARN)
  return
end

require('hlo.filetype').register()
-- `:help hlo` from a fresh clone: doc/tags is generated, not shipped
pcall(require('hlo').helptags)

if vim.g.hlo_no_autosetup ~= 1 and vim.g.hlo_no_autosetup ~= true then
  local hlo = require('hlo')
  if not hlo.config then
    hlo.setup({})
  end
end
