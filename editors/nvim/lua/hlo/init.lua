-- hlo.nvim: start the hlo-lsp language server for XLA dumps.
--
-- `setup(opts)` merges opts into the configuration and arranges for the
-- server to start on buffers of the `hlo`, `hlo_buffers`, `hlo_dump_info` and `hlo_oom` filetypes, with
-- the dump's folder as root directory, using the best API the running
-- Neovim offers:
--   0.11+     vim.lsp.config('hlo_lsp', ...) + vim.lsp.enable('hlo_lsp')
--   0.8-0.10  vim.lsp.start() from a FileType autocommand
--   0.7       vim.lsp.start_client() once per root + vim.lsp.buf_attach_client()
-- Calling setup again replaces the options (the next started client uses them;
-- :HloRestart applies them to running ones).
local M = {}

M.name = 'hlo_lsp'

local function default_cmd()
  if vim.fn.executable('hlo-lsp') == 1 then
    return { 'hlo-lsp' }
  end
  local python = vim.g.python3_host_prog
  if type(python) ~= 'string' or python == '' then
    python = vim.fn.executable('python3') == 1 and 'python3' or 'python'
  end
  return { vim.fn.expand(python), '-m', 'hlo_lsp' }
end

--- The defaults; `cmd = nil` means "hlo-lsp" when executable, else python -m hlo_lsp.
M.defaults = {
  cmd = nil,
  filetypes = { 'hlo', 'hlo_buffers', 'hlo_dump_info', 'hlo_oom' },
  settings = {
    hlo = {
      inlayHints = { enabled = true },
      codeLens = { enabled = true },
    },
  },
  init_options = nil, -- nil: the settings table is sent as initializationOptions too
  capabilities = nil,
  on_attach = nil,
  root_dir = nil, -- function(path, bufnr) -> directory; nil: the dump's folder
  autostart = true,
  -- which Neovim API starts the server: 'auto' (the newest available), 'enable'
  -- (vim.lsp.config/enable, 0.11+), 'start' (vim.lsp.start, 0.8+) or
  -- 'start_client' (0.7 style); for troubleshooting and tests
  lsp_api = 'auto',
}

M.config = nil
local augroup = nil

local function has(v)
  return vim.fn.has('nvim-' .. v) == 1
end

--- The root directory of a buffer: the folder holding the dump (nil for unnamed buffers).
function M.root_dir(bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr)
  if path == '' then
    return nil
  end
  if M.config and M.config.root_dir then
    return M.config.root_dir(path, bufnr)
  end
  return vim.fn.fnamemodify(path, ':p:h')
end

local function hlo_setting(key)
  local s = M.config.settings and M.config.settings.hlo or {}
  return not (s[key] and s[key].enabled == false)
end

local function on_attach(client, bufnr)
  local caps = client.server_capabilities or client.resolved_capabilities or {}
  if hlo_setting('inlayHints') and caps.inlayHintProvider and vim.lsp.inlay_hint then
    pcall(vim.lsp.inlay_hint.enable, true, { bufnr = bufnr })
  end
  if hlo_setting('codeLens') and caps.codeLensProvider and vim.lsp.codelens then
    local refresh = function()
      if has('0.10') then
        pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
      elseif vim.api.nvim_get_current_buf() == bufnr then
        -- before 0.10 refresh() asks for the current buffer, which may not be this one (or attached at all)
        pcall(vim.lsp.codelens.refresh)
      end
    end
    refresh()
    -- one group per buffer, cleared on each attach, so a restart does not stack refreshes
    local group = vim.api.nvim_create_augroup('hlo_lsp_codelens_' .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
      group = group,
      buffer = bufnr,
      callback = refresh,
    })
  end
  if M.config.on_attach then
    M.config.on_attach(client, bufnr)
  end
end

--- The client configuration for one buffer (0.7-0.10 style, also used by :HloRestart).
function M.client_config(bufnr)
  local c = M.config
  return {
    name = M.name,
    cmd = c.cmd,
    root_dir = M.root_dir(bufnr),
    settings = c.settings,
    init_options = c.init_options or c.settings,
    capabilities = c.capabilities,
    on_attach = on_attach,
  }
end

local warned = false
local function server_available()
  if vim.fn.executable(M.config.cmd[1]) == 1 then
    return true
  end
  if not warned then
    warned = true
    vim.notify(
      ('hlo-lsp: %q not found. Install the server from a clone of hlo-lsp: `pipx install .` (puts hlo-lsp '
        .. 'on PATH) or `pip install .` into the Python that Neovim runs; or set cmd in setup{}. See :help hlo-install')
        :format(M.config.cmd[1]),
      vim.log.levels.WARN
    )
  end
  return false
end

local clients_07 = {} -- root -> client id (Neovim 0.7 only)

--- Start (or reuse) the server for a buffer and attach it. Returns the client id or nil.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not M.config or not vim.tbl_contains(M.config.filetypes, vim.bo[bufnr].filetype) then
    return nil
  end
  local cfg = M.client_config(bufnr)
  if not cfg.root_dir or not server_available() then
    return nil
  end
  if vim.lsp.start and M.config.lsp_api ~= 'start_client' then
    return vim.lsp.start(cfg, { bufnr = bufnr })
  end
  local id = clients_07[cfg.root_dir]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or client.is_stopped() then
    id = vim.lsp.start_client(cfg)
    clients_07[cfg.root_dir] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

--- The running hlo-lsp clients (empty list when none).
function M.clients()
  local all = vim.lsp.get_clients and vim.lsp.get_clients({ name = M.name }) or vim.lsp.get_active_clients()
  local ours = {}
  for _, c in ipairs(all) do
    if c.name == M.name then
      table.insert(ours, c)
    end
  end
  return ours
end

--- Stop the running clients and start them again with the current options.
function M.restart()
  for _, c in ipairs(M.clients()) do
    c.stop()
  end
  clients_07 = {}
  vim.defer_fn(function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) then
        M.attach(b)
      end
    end
  end, 500)
end

local function merge(opts)
  local base = vim.deepcopy(M.defaults)
  local merged = vim.tbl_deep_extend('force', base, opts or {})
  -- lists replace, they are not merged element-wise
  if opts and opts.filetypes then
    merged.filetypes = opts.filetypes
  end
  if opts and opts.cmd then
    merged.cmd = opts.cmd
  end
  merged.cmd = merged.cmd or default_cmd()
  return merged
end

local uv = vim.uv or vim.loop

--- The plugin's folder (the parent of lua/hlo/).
local function plugin_root()
  local src = debug.getinfo(1, 'S').source:gsub('^@', '')
  return vim.fn.fnamemodify(src, ':p:h:h:h')
end

local function mtime(path)
  local st = uv.fs_stat(path)
  return st and st.mtime.sec or nil
end

--- Generate doc/tags when it is missing or older than doc/hlo.txt, so `:help hlo` works in a fresh clone (the
--- tags file is not in the repository). A read-only plugin folder gets its help in stdpath('cache')/hlo.nvim,
--- which is added to 'runtimepath'. Returns the tags file used, or nil.
function M.helptags()
  local doc = plugin_root() .. '/doc'
  local txt = doc .. '/hlo.txt'
  local src = mtime(txt)
  if not src then
    return nil
  end
  local function fresh(dir)
    local tags = mtime(dir .. '/tags')
    return tags ~= nil and tags >= src
  end
  if fresh(doc) then
    return doc .. '/tags'
  end
  if vim.fn.filewritable(doc) == 2 then
    vim.cmd('silent! helptags ' .. vim.fn.fnameescape(doc))
    if fresh(doc) then
      return doc .. '/tags'
    end
  end
  local alt = vim.fn.stdpath('cache') .. '/hlo.nvim'
  if not fresh(alt .. '/doc') then
    vim.fn.mkdir(alt .. '/doc', 'p')
    vim.fn.writefile(vim.fn.readfile(txt, 'b'), alt .. '/doc/hlo.txt', 'b')
    vim.cmd('silent! helptags ' .. vim.fn.fnameescape(alt .. '/doc'))
  end
  vim.opt.runtimepath:append(alt)
  return alt .. '/doc/tags'
end

--- The first running hlo-lsp client; nil (and a warning) when there is none.
local function running_client()
  local client = M.clients()[1]
  if not client then
    vim.notify('hlo-lsp is not running: open a dump first', vim.log.levels.WARN)
  end
  return client
end

local function uri_of(path)
  return vim.uri_from_fname(vim.fn.fnamemodify(path, ':p'))
end

--- Open a chart file (a file:// URI or a path): with vim.ui.open where it exists (0.10+), and say where it is
--- in any case, so the chart can be found when no viewer opens. `what` names it ('memory timeline' by default).
function M.open_chart(target, what)
  local path = target
  if type(target) == 'string' and target:match('^file://') then
    path = vim.uri_to_fname(target)
  end
  local opened = false
  if vim.ui and vim.ui.open then
    local ok, cmd, err = pcall(vim.ui.open, path)
    opened = ok and cmd ~= nil and err == nil
  end
  vim.notify(
    ('hlo-lsp: %s %s %s'):format(what or 'memory timeline', opened and 'opened:' or 'written to', path),
    vim.log.levels.INFO
  )
  return path
end

--- `workspace/executeCommand` on `client` (a method call from Neovim 0.11 on); `on_result(err, result)`.
local function execute(client, params, on_result, bufnr)
  if has('0.11') then
    client:request('workspace/executeCommand', params, on_result, bufnr)
  else
    client.request('workspace/executeCommand', params, on_result, bufnr)
  end
end

--- The chart commands: server command -> what the messages call it.
local CHARTS = { ['hlo.showMemoryTimeline'] = 'memory timeline', ['hlo.showHeapMap'] = 'heap map' }

--- Ask `client` to write a chart (workspace/executeCommand `command` with `arguments`), then open it;
--- `on_done(path|nil)` after.
local function request_chart(client, command, arguments, bufnr, on_done)
  local what = CHARTS[command] or 'chart'
  local params = { command = command, arguments = arguments }
  local function on_result(err, result)
    local path = nil
    if err then
      vim.notify(('hlo-lsp: no %s: %s'):format(what, err.message or tostring(err)), vim.log.levels.WARN)
    elseif type(result) == 'string' then
      path = M.open_chart(result, what)
    end
    if on_done then
      on_done(path)
    end
  end
  execute(client, params, on_result, bufnr)
end

--- Client-side handler of the server's chart code lenses (`hlo.showMemoryTimeline`, `hlo.showHeapMap`): ask
--- the server to write the chart, then open it. Neovim would otherwise run the command and drop its answer.
local function chart_lens(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if client then
    request_chart(client, command.command, command.arguments, ctx.bufnr)
  end
end

--- :HloTimeline / :HloHeapMap [FILE]: the chart of the module FILE belongs to (default: the current file).
function M.chart(command, file, on_done)
  local client = running_client()
  if not client then
    return
  end
  local path = (file and file ~= '') and file or vim.fn.expand('%:p')
  request_chart(client, command, { uri_of(path) }, nil, on_done)
end

--- Show a read-only report the server made (`{title, text}`): a scratch buffer in a new window; its links are
--- `/path:line`, so `gF` opens the line.
function M.show_report(result)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(result.text or '', '\n', { plain = true }))
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  pcall(vim.api.nvim_buf_set_name, buf, 'hlo://' .. (result.title or 'report') .. ' [' .. buf .. ']')
  vim.cmd('split')
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

--- Ask a running hlo-lsp client for a report (`hlo.peakDiff`, `hlo.rankModules`) and show it; `on_done(buf|nil)`.
function M.report(command, arguments, on_done)
  local client = running_client()
  if not client then
    return
  end
  local params = { command = command, arguments = arguments }
  local function on_result(err, result)
    local buf = nil
    if err then
      vim.notify('hlo-lsp: ' .. (err.message or tostring(err)), vim.log.levels.WARN)
    elseif type(result) == 'table' then
      buf = M.show_report(result)
    end
    if on_done then
      on_done(buf)
    end
  end
  execute(client, params, on_result)
end

--- :HloPeakDiff OLD NEW (two files of two dumps) or :HloPeakDiff [FOLDER] (its two newest modules; default:
--- the current file's folder).
function M.peak_diff(args)
  local files = args.fargs or {}
  local arguments
  if #files == 2 then
    arguments = { uri_of(files[1]), uri_of(files[2]) }
  else
    local folder = files[1] or vim.fn.expand('%:p:h')
    arguments = { uri_of(folder) }
  end
  table.insert(arguments, { links = 'path' })
  M.report('hlo.peakDiff', arguments)
end

--- :HloPeakGroups [FILE]: the values live at XLA's peak grouped by source line, op_name, dtype, category and
--- argument, every group, in a read-only window.
function M.peak_groups(args)
  local file = (args and args.fargs or {})[1] or vim.fn.expand('%:p')
  M.report('hlo.peakGroups', { uri_of(file) })
end

--- :HloRankModules [FOLDER]: the modules under the folder (default: the current file's) ranked by peak.
function M.rank_modules(args)
  local folder = (args.fargs or {})[1] or vim.fn.expand('%:p:h')
  M.report('hlo.rankModules', { uri_of(folder), { links = 'path' } })
end

--- :HloPassDiff: what the pass of the current file of a pass-by-pass dump did, against the file before it.
function M.pass_diff()
  M.report('hlo.passDiff', { uri_of(vim.fn.expand('%:p')), { links = 'path' } })
end

--- :HloPassTrace: the history of the instruction on the cursor's line through every pass file.
function M.pass_trace()
  M.report('hlo.passTrace', { uri_of(vim.fn.expand('%:p')), vim.fn.line('.') - 1 })
end

--- :HloPassPrev / :HloPassNext: jump to the instruction's version before the pass that last changed it, or to
--- the next file that changes (or removes) it.
function M.pass_step(direction, on_done)
  local client = running_client()
  if not client then
    return
  end
  local params = {
    command = 'hlo.passNeighbor',
    arguments = { uri_of(vim.fn.expand('%:p')), vim.fn.line('.') - 1, direction },
  }
  local function on_result(err, result)
    if err then
      vim.notify('hlo-lsp: ' .. (err.message or tostring(err)), vim.log.levels.WARN)
    elseif type(result) ~= 'table' then
      vim.notify('hlo-lsp: no ' .. direction .. ' version of this instruction', vim.log.levels.INFO)
    else
      vim.cmd('edit ' .. vim.fn.fnameescape(vim.uri_to_fname(result.uri)))
      if result.line ~= nil and result.line ~= vim.NIL then
        vim.api.nvim_win_set_cursor(0, { result.line + 1, 0 })
      end
      if result.change == 'removed' then
        vim.notify('hlo-lsp: removed in ' .. result.label, vim.log.levels.INFO)
      end
    end
    if on_done then
      on_done(result)
    end
  end
  execute(client, params, on_result)
end

--- Client-side handler of the pass lenses' `hlo.passDiff`: show the report (Neovim would drop the answer).
local function pass_diff_lens(command)
  M.report('hlo.passDiff', { command.arguments[1], { links = 'path' } })
end

--- Configure and enable the server. See :help hlo-setup. Returns nothing.
function M.setup(opts)
  M.config = merge(opts)
  warned = false
  require('hlo.filetype').register()
  augroup = vim.api.nvim_create_augroup('hlo_lsp', { clear = true })
  vim.api.nvim_create_user_command('HloRestart', M.restart, { desc = 'Restart hlo-lsp' })
  vim.api.nvim_create_user_command('HloPeakDiff', M.peak_diff, {
    nargs = '*',
    complete = 'file',
    desc = 'hlo-lsp: peak diff of two dumps (OLD NEW) or of a folder\'s two newest modules',
  })
  vim.api.nvim_create_user_command('HloRankModules', M.rank_modules, {
    nargs = '?',
    complete = 'dir',
    desc = 'hlo-lsp: the modules of a folder ranked by peak',
  })
  vim.api.nvim_create_user_command('HloPassDiff', M.pass_diff, { desc = 'hlo-lsp: what this pass did' })
  vim.api.nvim_create_user_command('HloPassTrace', M.pass_trace, {
    desc = 'hlo-lsp: the history of the instruction on this line through the passes',
  })
  vim.api.nvim_create_user_command('HloPassPrev', function()
    M.pass_step('previous')
  end, { desc = 'hlo-lsp: the previous version of the instruction on this line' })
  vim.api.nvim_create_user_command('HloPassNext', function()
    M.pass_step('next')
  end, { desc = 'hlo-lsp: the next pass file that changes the instruction on this line' })
  vim.api.nvim_create_user_command('HloTimeline', function(a)
    M.chart('hlo.showMemoryTimeline', a.args)
  end, { nargs = '?', complete = 'file', desc = 'hlo-lsp: memory timeline of this module (HTML)' })
  vim.api.nvim_create_user_command('HloHeapMap', function(a)
    M.chart('hlo.showHeapMap', a.args)
  end, { nargs = '?', complete = 'file', desc = 'hlo-lsp: heap map of this module (HTML)' })
  vim.api.nvim_create_user_command('HloPeakGroups', M.peak_groups, {
    nargs = '?',
    complete = 'file',
    desc = 'hlo-lsp: the values live at the peak grouped by source, op_name, dtype, category, argument',
  })
  vim.lsp.commands['hlo.showMemoryTimeline'] = chart_lens
  vim.lsp.commands['hlo.showHeapMap'] = chart_lens
  vim.lsp.commands['hlo.peakGroups'] = function(command)
    M.report('hlo.peakGroups', { command.arguments[1] })
  end
  vim.lsp.commands['hlo.passDiff'] = pass_diff_lens
  if not M.config.autostart then
    return
  end
  local api = M.config.lsp_api
  if (api == 'auto' or api == 'enable') and has('0.11') and vim.lsp.config and vim.lsp.enable then
    local c = M.config
    vim.lsp.config(M.name, {
      cmd = c.cmd,
      filetypes = c.filetypes,
      root_dir = function(bufnr, on_dir)
        local root = M.root_dir(bufnr)
        if root then
          on_dir(root)
        end
      end,
      settings = c.settings,
      init_options = c.init_options or c.settings,
      capabilities = c.capabilities,
      on_attach = on_attach,
    })
    vim.lsp.enable(M.name)
    -- vim.lsp.enable skips a missing command silently (lsp.log only): say it once
    vim.api.nvim_create_autocmd('FileType', {
      group = augroup,
      pattern = c.filetypes,
      callback = function()
        server_available()
      end,
    })
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) and vim.tbl_contains(c.filetypes, vim.bo[b].filetype) then
        server_available()
      end
    end
    return
  end
  vim.api.nvim_create_autocmd('FileType', {
    group = augroup,
    pattern = M.config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  -- buffers opened before setup ran
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then
      M.attach(b)
    end
  end
end

return M
