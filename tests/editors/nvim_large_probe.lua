-- Driven by tests/editors/test_nvim_large.py: a user of the hlo plugin in headless Neovim 0.11 opens a large
-- generated module (semantic tokens on, as Neovim has them by default), and this probe records what the user
-- gets: the colour of a definition (Neovim's own semantic-token highlighter), a hover, a go-to-definition,
-- the outline. Spec ($HLO_PROBE_SPEC, JSON): out (result path), def {line, character} (an instruction's name
-- where it is defined), use {line, character} (a use of that name), hover_wants (optional: text to wait for in
-- the hover at use).
local TIMEOUT = tonumber(vim.env.HLO_PROBE_TIMEOUT or '300000')
local spec = vim.fn.json_decode(table.concat(vim.fn.readfile(vim.env.HLO_PROBE_SPEC), '\n'))
local out = { errors = {} }
local buf = vim.api.nvim_get_current_buf()

local function finish()
  vim.fn.writefile({ vim.fn.json_encode(out) }, spec.out)
  vim.cmd('qa!')
end

local ok, err = pcall(function()
  local client
  vim.wait(TIMEOUT, function()
    for _, c in ipairs(vim.lsp.get_clients({ bufnr = buf })) do
      if c.name == 'hlo_lsp' and c.initialized then
        client = c
        return true
      end
    end
    return false
  end, 100)
  out.client = client and client.name or nil
  out.filetype = vim.bo[buf].filetype
  if not client then
    return
  end
  out.semantic_tokens_provider = client.server_capabilities.semanticTokensProvider ~= nil
  -- Neovim asks for full tokens on attach and highlights them; wait until the definition is coloured
  local row, col = spec.def.line, spec.def.character
  vim.wait(TIMEOUT, function()
    local toks = vim.lsp.semantic_tokens.get_at_pos(buf, row, col) or {}
    for _, t in ipairs(toks) do
      out.def_token = { type = t.type, modifiers = vim.tbl_keys(t.modifiers or {}) }
      return true
    end
    return false
  end, 200)
  local function req(method, pos)
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = pos }
    local res = vim.lsp.buf_request_sync(buf, method, params, TIMEOUT) or {}
    for _, r in pairs(res) do
      if r.err then
        table.insert(out.errors, method .. ': ' .. vim.inspect(r.err))
      end
      return r.result
    end
  end
  local hover
  vim.wait(TIMEOUT, function()  -- null while the buffer is still being read
    hover = req('textDocument/hover', spec.use)
    -- spec.hover_wants: text the complete hover holds (a partial one says a sibling file is still loading)
    return hover ~= nil and hover ~= vim.NIL and (spec.hover_wants == nil
      or (hover.contents and (hover.contents.value or ''):find(spec.hover_wants, 1, true) ~= nil))
  end, 500)
  out.hover = hover and hover ~= vim.NIL and hover.contents and hover.contents.value or ''
  local def = req('textDocument/definition', spec.use)
  out.definition = {}
  for _, loc in ipairs(def or {}) do
    table.insert(out.definition, { uri = loc.uri or loc.targetUri, line = (loc.range or loc.targetRange).start.line })
  end
  local syms = req('textDocument/documentSymbol', nil)
  out.outline = {}
  for _, s in ipairs(syms or {}) do
    local kids = {}
    for _, c in ipairs(s.children or {}) do
      table.insert(kids, { name = c.name, line = c.range.start.line, n = #(c.children or {}), detail = c.detail or '' })
    end
    table.insert(out.outline, { name = s.name, children = kids })
  end
end)
if not ok then
  table.insert(out.errors, tostring(err))
end
finish()
