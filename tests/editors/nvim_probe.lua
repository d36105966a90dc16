-- Driven by tests/editors/test_nvim.py: acts as a user of the hlo plugin in a
-- headless Neovim (0.7 to 0.11) and writes what it saw to a JSON file.
-- The spec (JSON file named by $HLO_PROBE_SPEC):
--   out      path of the result JSON
--   main     {line, character} (0-based) of a value in the file opened on the
--            command line; hover and go-to-definition are requested there
--   broken   path of a hand-written broken HLO module (diagnostics expected)
--   sniff    list of {path, hover = {line, character} | nil}: files whose
--            names give no hint; their filetype comes from the first line
local TIMEOUT = tonumber(vim.env.HLO_PROBE_TIMEOUT or '60000')
local spec = vim.fn.json_decode(table.concat(vim.fn.readfile(vim.env.HLO_PROBE_SPEC), '\n'))
local out = { version = tostring(vim.version().major) .. '.' .. vim.version().minor .. '.' .. vim.version().patch,
  errors = {}, log = {} }

local function log(msg)
  table.insert(out.log, msg)
end

local function buf_clients(bufnr)
  local list = {}
  if vim.lsp.get_clients then
    list = vim.lsp.get_clients({ bufnr = bufnr })
  else
    for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
      table.insert(list, c)
    end
  end
  return list
end

--- Wait until an initialized hlo_lsp client is attached to bufnr; returns its name or nil.
local function any_hlo_client()
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  for _, c in pairs(all) do
    if c.name == 'hlo_lsp' and not c.is_stopped() then
      return true
    end
  end
  return false
end

--- Wait until an initialized hlo_lsp client is attached to bufnr; returns its name or nil
--- (early when, after 20 s, no hlo_lsp client is running at all: the server died; a loaded machine, e.g.
--- the suite on parallel workers, can take several seconds to start one).
local function wait_attached(bufnr)
  local name
  local start = vim.loop.now()
  vim.wait(TIMEOUT, function()
    for _, c in ipairs(buf_clients(bufnr)) do
      if c.initialized and c.name == 'hlo_lsp' and vim.lsp.buf_is_attached(bufnr, c.id) then
        name = c.name
        return true
      end
    end
    return vim.loop.now() - start > 20000 and not any_hlo_client()
  end, 100)
  return name
end

local function markup_text(contents)
  if contents == nil or contents == vim.NIL then
    return ''
  end
  if type(contents) == 'string' then
    return contents
  end
  if contents.value then
    return contents.value
  end
  local parts = {}
  for _, c in ipairs(contents) do
    table.insert(parts, markup_text(c))
  end
  return table.concat(parts, '\n')
end

local function request(bufnr, method, pos)
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = pos }
  local responses = vim.lsp.buf_request_sync(bufnr, method, params, TIMEOUT)
  for _, r in pairs(responses or {}) do
    if r.err then
      table.insert(out.errors, method .. ': ' .. vim.inspect(r.err))
    elseif r.result ~= nil and r.result ~= vim.NIL then
      return r.result
    end
  end
  return nil
end

--- Hover text at pos (0-based), retried while the server still answers null.
local function hover_text(bufnr, pos)
  local text = ''
  vim.wait(TIMEOUT, function()
    local result = request(bufnr, 'textDocument/hover', pos)
    text = result and markup_text(result.contents) or ''
    return text ~= ''
  end, 500)
  return text
end

local function floating_windows()
  local wins = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then
      table.insert(wins, w)
    end
  end
  return wins
end

--- What a user sees after `K`: the lines of the hover float ('' when none opened).
local function hover_float(pos)
  vim.api.nvim_win_set_cursor(0, { pos.line + 1, pos.character })
  vim.lsp.buf.hover()
  local wins = {}
  vim.wait(TIMEOUT, function()
    wins = floating_windows()
    return #wins > 0
  end, 100)
  local lines = {}
  for _, w in ipairs(wins) do
    vim.list_extend(lines, vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false))
    pcall(vim.api.nvim_win_close, w, true)
  end
  return table.concat(lines, '\n')
end

local function locations(result)
  local list = {}
  if result == nil then
    return list
  end
  if result.uri or result.targetUri then
    result = { result }
  end
  for _, l in ipairs(result) do
    local range = l.targetSelectionRange or l.range
    table.insert(list, { uri = l.targetUri or l.uri, line = range.start.line, character = range.start.character })
  end
  return list
end

--- Syntax group names of each byte of a (0-based) line of the current buffer.
local function syntax_line(line)
  local text = vim.api.nvim_buf_get_lines(0, line, line + 1, false)[1] or ''
  local groups = {}
  for col = 1, #text do
    groups[col] = vim.fn.synIDattr(vim.fn.synID(line + 1, col, 1), 'name')
  end
  return groups
end

local function step(name, fn)
  local ok, err = pcall(fn)
  if not ok then
    table.insert(out.errors, name .. ': ' .. tostring(err))
  end
end

local main_buf = vim.api.nvim_get_current_buf()

step('main', function()
  out.main = {
    path = vim.api.nvim_buf_get_name(main_buf),
    filetype = vim.bo[main_buf].filetype,
  }
  out.main.client = wait_attached(main_buf)
  if not out.main.client then
    return
  end
  for _, c in ipairs(buf_clients(main_buf)) do
    if c.name == 'hlo_lsp' then
      out.main.root_dir = c.root_dir or (c.config and c.config.root_dir)
    end
  end
  local pos = spec.main
  out.main.syntax = syntax_line(pos.line)
  out.main.hover = hover_text(main_buf, pos)
  out.main.hover_float = hover_float(pos)
  out.main.definition = locations(request(main_buf, 'textDocument/definition', pos))
  -- the jump a user gets from `gd` / vim.lsp.buf.definition()
  vim.api.nvim_set_current_buf(main_buf)
  vim.api.nvim_win_set_cursor(0, { pos.line + 1, pos.character })
  vim.lsp.buf.definition()
  vim.wait(TIMEOUT, function()
    return vim.api.nvim_get_current_buf() ~= main_buf
  end, 100)
  local cursor = vim.api.nvim_win_get_cursor(0)
  out.main.jump = {
    path = vim.api.nvim_buf_get_name(0),
    filetype = vim.bo.filetype,
    line = cursor[1] - 1,
    character = cursor[2],
    commentstring = vim.bo.commentstring,
  }
  out.main.jump.syntax = syntax_line(cursor[1] - 1)
end)

step('broken', function()
  if not spec.broken then
    return
  end
  vim.cmd('edit ' .. vim.fn.fnameescape(spec.broken))
  local b = vim.api.nvim_get_current_buf()
  out.broken = { filetype = vim.bo[b].filetype, client = wait_attached(b), diagnostics = {} }
  vim.wait(TIMEOUT, function()
    return #vim.diagnostic.get(b) > 0
  end, 100)
  vim.wait(1500) -- the same findings arriving a second way (pulled as well as pushed) would be here by now
  for _, d in ipairs(vim.diagnostic.get(b)) do
    table.insert(out.broken.diagnostics, { lnum = d.lnum, col = d.col, severity = d.severity, message = d.message })
  end
end)

out.sniff = {}
for i, s in ipairs(spec.sniff or {}) do
  step('sniff ' .. i, function()
    vim.cmd('edit ' .. vim.fn.fnameescape(s.path))
    local b = vim.api.nvim_get_current_buf()
    local r = { path = s.path, filetype = vim.bo[b].filetype }
    out.sniff[i] = r
    if s.hover and s.hover ~= vim.NIL then
      r.client = wait_attached(b)
      if r.client then
        r.hover = hover_text(b, s.hover)
      end
    end
  end)
end

local f = assert(io.open(spec.out, 'w'))
f:write(vim.fn.json_encode(out))
f:close()
vim.cmd('qall!')
