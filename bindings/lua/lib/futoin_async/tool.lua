--- futoin_async, part "tool": fa.Tool() (an AsyncTool: one libuv loop, its
-- own or luv's), its methods, timers, fa.default_tool().
--
-- A part of the module futoin_async, run by lib/futoin_async.lua while
-- loading (see there). Leaves in I: I.tool_info (tool -> { luv = uv } for
-- a Tool on luv's loop, which root:run() drives). Uses I.load_policy (the
-- part "policy").

local type, pcall, error, setmetatable, tostring =
    type, pcall, error, setmetatable, tostring

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
    -- spec-style names
    T.call_immediate = T.immediate
    T.call_later = T.deferred

    local Timer = { cancel = core.timer_cancel, pending = core.timer_pending }
    core.metatable("timer").__index = Timer

    local TOOL_OPTIONS = { loop = true, uv_loop = true, allow = true }
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
                error(("Tool(opts): unknown option %s (loop, uv_loop, allow)"):format(
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
        local why = opts.allow ~= nil and load_policy.check(opts.allow, "Tool{ allow }")
        if why then
            error(why, 2)
        end
        local ok, t
        if opts.loop == "luv" then
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
