--- futoin_async, part "tool": fa.Tool() (an AsyncTool: one libuv loop, its
-- own or luv's), its methods, timers, fa.default_tool().
--
-- A part of the module futoin_async, run by lib/futoin_async.lua while
-- loading (see there). Leaves in I: I.tool_info (tool -> { luv = uv } for
-- a Tool on luv's loop, which root:run() drives). Uses I.load_policy (the
-- part "policy").

local type, pcall, error, setmetatable, tostring, pairs =
    type, pcall, error, setmetatable, tostring, pairs

return function(M, core, I)
    local tool_info = setmetatable({}, { __mode = "k" }) -- tool -> { luv = uv }

    local T = {}
    core.metatable("tool").__index = T
    T.run = core.tool_run
    T.run_nowait = core.tool_run_nowait
    T.close = core.tool_close
    T.immediate = core.tool_immediate
    T.deferred = core.tool_deferred
    T.is_same_thread = core.tool_is_same_thread
    T.misuse_count = core.tool_misuse_count
    T.uv_loop = core.tool_uv_loop
    T.executing = core.tool_executing
    T.attached = core.tool_attached
    T.ptr = core.tool_ptr
    -- virtual time (milliseconds, as deferred())
    T.advance = core.tool_advance
    T.next_due = core.tool_next_due
    T.now = core.tool_now
    T.is_virtual = core.tool_is_virtual
    -- watching its flows (futoin/sys/hooks.h, futoin_tool_dump())
    T.dump = core.tool_dump
    local HOOK_EVENTS = {
        flow_started = true, flow_finished = true, step_entered = true,
        step_left = true, error_raised = true, error_handled = true,
        cancel = true, wait_begun = true, wait_ended = true,
        sync_acquired = true, sync_released = true,
    }
    M.HOOK_EVENTS = HOOK_EVENTS

    --- tool:set_hooks{ step_entered = function(ev) ... end, ... }: call
    -- each function on the loop thread at its event, with a table (event,
    -- root_id, now in tool ms, and as the event has them: language,
    -- ["function"], file, line, code, info, outcome, wait, due,
    -- wait_language, sync). tool:set_hooks() or set_hooks(nil) clears
    -- them. Unknown names and non-functions are refused.
    function T:set_hooks(hooks)
        if hooks ~= nil then
            if type(hooks) ~= "table" then
                error("tool:set_hooks(hooks): a table of functions or nil", 2)
            end
            for name, fn in pairs(hooks) do
                if not HOOK_EVENTS[name] then
                    error(("tool:set_hooks(): no event '%s'"):format(tostring(name)), 2)
                end
                if type(fn) ~= "function" then
                    error(("tool:set_hooks(): %s must be a function"):format(name), 2)
                end
            end
        end
        core.tool_set_hooks(self, hooks)
    end
    -- spec-style names
    T.call_immediate = T.immediate
    T.call_later = T.deferred

    local Timer = { cancel = core.timer_cancel, pending = core.timer_pending }
    core.metatable("timer").__index = Timer

    local TOOL_OPTIONS = { loop = true, uv_loop = true, allow = true, virtual_time = true }
    local load_policy = I.load_policy

    --- tool:set_load_policy{ languages = {...}, modules = {...} }: restrict
    -- what the flows of this tool may load by name (see the README, "Step
    -- names are code: the load policy"). Set once: a second policy, a
    -- borrowed Tool (its program sets its own) or a closed one raise.
    function T:set_load_policy(policy)
        local where = "tool:set_load_policy()"
        local why = load_policy.check(policy, where) or load_policy.set(self, policy, where)
        if why then
            error(why, 2)
        end
    end

    --- Tool([opts]): an AsyncTool, one libuv event loop.
    --   Tool()                 owns its loop; Tool:run() drives it
    --   Tool{ loop = "luv" }   attaches to luv's loop: uv.run() drives luv's
    --                          handles and our steps together
    --   Tool{ uv_loop = ptr }  attaches to any uv_loop_t* (a light userdata,
    --                          e.g. another Tool's tool:uv_loop()); nothing else
    --                          is taken for an address
    --   Tool{ virtual_time = true }  owns its loop, on a virtual clock for
    --                          tests: tool:advance(ms) moves it, running what
    --                          falls due; tool:run() never waits for a timer
    --                          (README: "Virtual time"); not with loop/uv_loop
    --   Tool{ allow = { languages = {...}, modules = {...} } }
    --                          its load policy (tool:set_load_policy())
    -- Unknown options and wrong types are refused.
    function M.Tool(opts)
        if opts ~= nil and type(opts) ~= "table" then
            error("Tool(opts): opts must be a table or nil, got " .. type(opts), 2)
        end
        opts = opts or {}
        for k in pairs(opts) do
            if not TOOL_OPTIONS[k] then
                error(("Tool(opts): unknown option %s (loop, uv_loop, virtual_time, allow)"):format(
                    type(k) == "string" and ("'" .. k .. "'") or tostring(k)), 2)
            end
        end
        if opts.uv_loop ~= nil and type(opts.uv_loop) ~= "userdata" then
            error("Tool{ uv_loop = ptr }: ptr must be a uv_loop_t* (a light userdata), got "
                .. type(opts.uv_loop), 2)
        end
        if opts.loop ~= nil and opts.uv_loop ~= nil then
            error("Tool(opts): give loop or uv_loop, not both", 2)
        end
        if opts.virtual_time ~= nil and type(opts.virtual_time) ~= "boolean" then
            error("Tool{ virtual_time = ... }: a boolean, got " .. type(opts.virtual_time), 2)
        end
        if opts.virtual_time and (opts.loop ~= nil or opts.uv_loop ~= nil) then
            error("Tool{ virtual_time = true } needs a loop of its own: not with "
                .. "loop or uv_loop (that loop's owner runs it on the wall clock)", 2)
        end
        local why = opts.allow ~= nil and load_policy.check(opts.allow, "Tool{ allow }")
        if why then
            error(why, 2)
        end
        local ok, t
        if opts.virtual_time then
            ok, t = pcall(core.tool_new_virtual)
        elseif opts.loop == "luv" then
            local has, uv = pcall(require, "luv")
            if not has then
                error("Tool{ loop = \"luv\" }: luv is not available: " .. tostring(uv), 2)
            end
            local path = package.searchpath("luv", package.cpath) or "luv"
            ok, t = pcall(core.tool_new_luv, path)
            if ok then
                tool_info[t] = { luv = uv }
            end
        elseif opts.loop ~= nil then
            error("Tool(opts): unknown loop '" .. tostring(opts.loop) .. "' (\"luv\" or nil)", 2)
        elseif opts.uv_loop ~= nil then
            ok, t = pcall(core.tool_new, opts.uv_loop)
        else
            ok, t = pcall(core.tool_new)
        end
        if not ok then
            error(t, 2)
        end
        why = opts.allow ~= nil and load_policy.set(t, opts.allow, "Tool{ allow }")
        if why then
            core.tool_close(t)
            error(why, 2)
        end
        return t
    end
    M.AsyncTool = M.Tool

    local default_tool

    --- default_tool(): the Tool made on first use when none is given.
    function M.default_tool()
        if not default_tool then
            default_tool = M.Tool()
        end
        return default_tool
    end

    I.tool_info = tool_info
end
