-- Filetype detection for XLA dumps.
--
-- Filetypes:
--   hlo          HLO module text: *.hlo, *.hlo.txt, *before_optimizations.txt,
--                *after_optimizations.txt, or any .txt whose first line starts
--                with "HloModule ".
--   hlo_buffers  buffer-assignment dumps: *-buffer-assignment.txt,
--                *-buffer-assignment-values.txt, *-live-range.txt,
--                *-memory-usage-report.txt, or any .txt whose first non-empty
--                line starts with "BufferAssignment:", "HloLiveRange",
--                "Total bytes used:" (values file) or "Memory Space:" (report).
--
--   hlo_dump_info  the other files XLA writes into a dump folder, by name:
--                GPU thunk sequences and metadata, TPU/GPU config text protos
--                (`*.hlo_module_config.txt`, `*.gpu_target_config.pbtxt`, ...),
--                `module_*.debug_options`, `module_*.flagfile`; the server
--                says what each one is.
--   hlo_oom      XLA's compile-time out-of-memory report (RESOURCE_EXHAUSTED): a
--                .log, .out or .txt file that holds one anywhere (it usually sits
--                inside a longer log), or the dump's own
--                `*.oom_top_memory_consuming_instructions`; the server links its
--                entries to the dump of the failed compilation.
--
-- Names are matched first (priority 10), then the content sniff for other
-- .txt files (priority 1, still before Neovim's own `*.txt` -> text rule,
-- which is an extension rule and runs after non-negative patterns).
-- On 0.7 the Lua filetype machinery only runs with `vim.g.do_filetype_lua = 1`;
-- without it an autocommand of our own does the same work.
local M = {}

--- Names matched on the file's tail, as Lua patterns (anchored by Neovim).
M.name_patterns = {
  ['.*%.hlo'] = 'hlo',
  ['.*%.hlo%.txt'] = 'hlo',
  ['.*before_optimizations%.txt'] = 'hlo',
  ['.*after_optimizations%.txt'] = 'hlo',
  ['.*%-buffer%-assignment%.txt'] = 'hlo_buffers',
  ['.*%-buffer%-assignment%-values%.txt'] = 'hlo_buffers',
  ['.*%-live%-range%.txt'] = 'hlo_buffers',
  ['.*%-memory%-usage%-report%.txt'] = 'hlo_buffers',
  ['.*thunk_sequence.*%.txt'] = 'hlo_dump_info',
  ['.*%.thunk_metadata%.txt'] = 'hlo_dump_info',
  ['.*%.gpu_target_config%.pbtxt'] = 'hlo_dump_info',
  ['.*%.autotune_results%.pbtxt'] = 'hlo_dump_info',
  ['module_.*%.config%.pbtxt'] = 'hlo_dump_info',
  ['module_.*%.debug_options'] = 'hlo_dump_info',
  ['module_.*%.flagfile'] = 'hlo_dump_info',
  ['.*%.tpu_comp_env%.txt'] = 'hlo_dump_info',
  ['.*%.hlo_module_config%.txt'] = 'hlo_dump_info',
  ['.*%.execution_options%.txt'] = 'hlo_dump_info',
  ['.*%.target_arguments%.txt'] = 'hlo_dump_info',
  ['.*%.transfer_stats%.txt'] = 'hlo_dump_info',
  ['.*%.basic_compiler_metadata%.txt'] = 'hlo_dump_info',
  ['.*%.oom_top_memory_consuming_instructions'] = 'hlo_oom',
}

--- Lines of a buffer searched for an out-of-memory report (a log of a few MB).
M.oom_max_lines = 200000

--- Whether the lines hold XLA's out-of-memory report (the server's `looks_like_oom`).
function M.oom_in_lines(lines)
  -- XLA's message lines with their numbers: prose that only names them (this plugin's help) is not a report
  local size = '[%d%.]+[KMGTP]?B?'
  local long = 'Ran out of memory in memory space %w+%. Used ' .. size .. ' of ' .. size
  local short = 'HLO temporaries %(' .. size .. '%) exceeds available %w+ %(' .. size .. '%)'
  for _, line in ipairs(lines) do
    if line:find(long) or line:find(short) then
      return true
    end
  end
  return false
end

--- The first `count` lines of a loaded buffer; nil when there is no such buffer or it is not loaded.
local function loaded_lines(bufnr, count)
  if not bufnr or not vim.api.nvim_buf_is_loaded(bufnr) then
    return nil
  end
  return vim.api.nvim_buf_get_lines(bufnr, 0, count, false)
end

--- 'hlo_oom' when the loaded buffer holds an out-of-memory report; nil otherwise.
function M.oom_in_buffer(bufnr)
  local lines = loaded_lines(bufnr, M.oom_max_lines)
  return lines and M.oom_in_lines(lines) and 'hlo_oom' or nil
end

local first_line_prefixes = {
  { 'HloModule ', 'hlo' },
  { 'BufferAssignment:', 'hlo_buffers' },
  { 'HloLiveRange', 'hlo_buffers' },
  { 'Total bytes used:', 'hlo_buffers' },
  { 'Memory Space:', 'hlo_buffers' },
}

--- Filetype from a list of the file's first lines; nil when none matches.
function M.from_lines(lines)
  for _, line in ipairs(lines) do
    if line:match('%S') then
      for _, rule in ipairs(first_line_prefixes) do
        if line:sub(1, #rule[1]) == rule[1] then
          return rule[2]
        end
      end
      return nil -- only the first non-empty line counts
    end
  end
  return nil
end

--- Filetype from the buffer's first lines; nil when the buffer is not loaded or unknown.
function M.from_buffer(bufnr)
  local lines = loaded_lines(bufnr, 8)
  return lines and M.from_lines(lines) or nil
end

--- Filetype from a file name alone; nil when the name gives no hint.
function M.from_name(path)
  local tail = vim.fn.fnamemodify(path, ':t')
  for pat, ft in pairs(M.name_patterns) do
    if tail:match('^' .. pat .. '$') then
      return ft
    end
  end
  return nil
end

--- Filetype by name, then by content for .txt files; nil when neither matches.
function M.detect(path, bufnr)
  local ft = M.from_name(path)
  if ft then
    return ft
  end
  if path:match('%.txt$') then
    return M.from_buffer(bufnr) or M.oom_in_buffer(bufnr)
  end
  if path:match('%.log$') or path:match('%.out$') then
    return M.oom_in_buffer(bufnr)
  end
  return nil
end

local registered = false

--- Install the rules once. Returns nothing.
function M.register()
  if registered then
    return
  end
  registered = true
  local lua_detection = vim.filetype and vim.filetype.add
    and (vim.fn.has('nvim-0.8') == 1 or vim.g.do_filetype_lua == 1)
  if lua_detection then
    local pattern = {}
    for pat, ft in pairs(M.name_patterns) do
      pattern[pat] = { ft, { priority = 10 } }
    end
    pattern['.*%.txt'] = {
      function(_, bufnr)
        return M.from_buffer(bufnr) or M.oom_in_buffer(bufnr)
      end,
      { priority = 1 },
    }
    for _, ext in ipairs({ 'log', 'out' }) do
      pattern['.*%.' .. ext] = {
        function(_, bufnr)
          return M.oom_in_buffer(bufnr)
        end,
        { priority = 1 },
      }
    end
    vim.filetype.add({ extension = { hlo = 'hlo' }, pattern = pattern })
    return
  end
  -- Neovim 0.7 with the legacy filetype.vim only: our own autocommand, defined
  -- after filetypedetect's, so it may override the generic "text".
  local group = vim.api.nvim_create_augroup('hlo_filetype', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
    group = group,
    callback = function(args)
      local ft = M.detect(args.file ~= '' and args.file or vim.api.nvim_buf_get_name(args.buf), args.buf)
      local current = vim.bo[args.buf].filetype
      if ft and ft ~= current and (current == '' or current == 'text') then
        vim.bo[args.buf].filetype = ft
      end
    end,
  })
end

return M
