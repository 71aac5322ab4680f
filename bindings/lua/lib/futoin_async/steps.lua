--- futoin_async, part "steps": the methods of roots and step handles
-- (the C functions put straight into the metatables, and those written
-- here: for_each, sync, new_instance, result, run), their FTN12 and
-- camelCase names, fa.AsyncSteps() and fa.wrap().
--
-- A part of the module futoin_async, run by lib/futoin_async.lua while
-- loading (see there). Uses I.tool_info; leaves in I: I.S (the methods,
-- which later parts extend), I.root_mt, I.sync_objects (the sync objects
-- asi:sync() accepts; the part "sync" makes them).

local type, pcall, error, setmetatable, getmetatable, tostring, tonumber =
    type, pcall, error, setmetatable, getmetatable, tostring, tonumber
local unpack = table.unpack

return function(M, core, I)
    local tool_info = I.tool_info

    -- methods of roots and step handles: add and success are in it already,
    -- where their lookups are cheapest (glue/lua_ctx.c fl_methods_new)
    local S = core._methods()
    local sync_objects = setmetatable({}, { __mode = "k" }) -- Mutex/Throttle/Limiter made here
    local step_mt, root_mt = core.metatable("step"), core.metatable("root")
    step_mt.__index = S
    root_mt.__index = S
    -- A step's handle is usually a light userdata (glue/lua_handle.c): the
    -- metatable of light userdata, when the module could take it, reaches the
    -- same methods.
    core.metatable("light").__index = S
    local P = { add = core.add, is_valid = core.is_valid, isValid = core.is_valid,
        tool = core._tool }
    core.metatable("parallel").__index = P

    local opaque_mt = core.metatable("opaque")
    opaque_mt.__index = {}

    S.add = core.add
    S.parallel = core.parallel
    S.success = core.success
    S.error = core.error
    S.success_step = core.success_step
    S.set_timeout = core.set_timeout
    S.set_cancel = core.set_cancel
    S.wait_external = core.wait_external
    S.loop = core.loop
    S.repeat_loop = core.repeat_loop
    S.break_loop = core.break_loop
    S.continue_loop = core.continue_loop
    S.state = core.state
    S.execute = core.execute -- execute([unhandled [, on_done]])
    S.cancel = core.cancel   -- true if the root was executing
    S.free = core.free
    S.root_id = core.root_id
    S.is_valid = core.is_valid
    S.status = core.status
    S.binary = core.binary
    S.error_info = core.error_info
    S.last_exception = core.last_exception
    S.tool = core._tool
    S.async_stack = core.async_stack
    S.shared_get = core.shared_get
    S.shared_set = core.shared_set

    --- asi:for_each(t, body [, label]): body(asi, key, value) for every entry.
    -- A sequence goes in order 1..#t; other tables in the order of their keys
    -- sorted (numbers first, then strings, then the rest by tostring), so the
    -- order is deterministic.
    local function key_less(a, b)
        local ta, tb = type(a), type(b)
        if ta ~= tb then
            local rank = { number = 1, string = 2 }
            return (rank[ta] or 3) < (rank[tb] or 3) or
                ((rank[ta] or 3) == (rank[tb] or 3) and ta < tb)
        end
        if ta == "number" or ta == "string" then
            return a < b
        end
        return tostring(a) < tostring(b)
    end

    function S.for_each(asi, t, body, label)
        if type(t) ~= "table" then
            error("for_each(t, body, label): t must be a table, got " .. type(t), 2)
        end
        local keys, n = {}, #t
        local count = 0
        for _ in pairs(t) do count = count + 1 end
        if count == n then
            for i = 1, n do keys[i] = i end
        else
            for k in pairs(t) do keys[#keys + 1] = k end
            table.sort(keys, key_less)
        end
        local ok, e
        if type(body) ~= "function" and not (getmetatable(body) or {}).__call then
            error("for_each(t, body, label): body must be a function, got " .. type(body), 2)
        end
        ok, e = pcall(core.repeat_loop, asi, #keys, function(a, i)
            local k = keys[i]
            return body(a, k, t[k])
        end, label)
        if not ok then
            error(e, 2)
        end
        return asi
    end

    --- asi:sync(obj, step [, onerror]): a step inside a Mutex/Throttle/Limiter.
    function S.sync(asi, obj, step, onerror)
        if not sync_objects[obj] then
            error("sync(obj, step, onerror): obj must be a Mutex, Throttle or Limiter", 2)
        end
        local ptr = rawget(obj, "_ptr")
        if not ptr then
            error("sync(obj, step, onerror): the " .. obj.kind .. " is closed", 2)
        end
        local ok, e = pcall(core._sync, asi, ptr, step, onerror)
        if not ok then
            error(e, 2)
        end
        return asi
    end

    --- asi:new_instance(): a new root on the Tool of this root or step (the
    -- Tool its flow runs on, see asi:tool()).
    function S.new_instance(asi)
        local ok, t = pcall(core._tool, asi)
        if not ok then
            error(t, 2)
        end
        if not t then
            error("new_instance(): this handle has no Tool (a handle of another "
                .. "FTN12 implementation, adopted with fa.wrap())", 2)
        end
        local ok2, r = pcall(core.root_new, t)
        if not ok2 then
            error(r, 2)
        end
        -- The engine's newInstance() continues a traced flow under the span
        -- of this handle (futoin/trace.h); this root is the Tool's own, so
        -- it continues it the same way: this handle's traceparent.
        local text = core.futoin_bind_trace_get_at(asi:binary())
        if text and text ~= "" then
            core.futoin_bind_trace_set_at(r:binary(), text:sub(1, 55))
        end
        return r
    end

    --- root:result(): how the root's last execution ended, as pcall() says
    -- it: true and the values of its last step; or false and the error (a
    -- FutoInError: the unhandled error, with `cause` and `async_stack`; for a
    -- cancelled root an fa.CancelledError). nil while it runs or before it
    -- ever ran.
    function S.result(root)
        local ok, r = pcall(core._result, root)
        if not ok then
            error(r, 2)
        end
        if r == nil then
            return nil
        end
        return unpack(r, 1, r.n)
    end

    --- root:run(): execute() this root and drive its Tool until the root is
    -- done. Returns the last step's values; an unhandled error is raised as a
    -- FutoInError (the original Lua error, if any, as its `cause`); a
    -- cancelled root raises an fa.CancelledError (fa.is_cancelled(e)).
    -- On a luv Tool, uv.run("once") is called until the root is done. On a
    -- virtual-time Tool the clock is advanced from one due timer to the
    -- next until the root is done, without waiting; an error if it still
    -- waits when no timer is left (for another thread: join it first).
    function S.run(root)
        local ok, tool = pcall(core._root_tool, root)
        if not ok or not tool then
            error("run(): only a root AsyncSteps of a Tool can run", 2)
        end
        local e
        ok, e = pcall(core.execute, root)
        if not ok then
            error(e, 2)
        end
        local info = tool_info[tool]
        if info and info.luv then
            local uv = info.luv
            while core.status(root) == "running" do
                local more = uv.run("once")
                if not more and core.status(root) == "running" then
                    error("run(): the loop has nothing left to do but the flow did not finish", 2)
                end
            end
        else
            tool:run()
            if tool:is_virtual() then
                while core.status(root) == "running" do
                    local ms = tool:next_due()
                    if not ms then
                        error("run(): the flow still waits and no timer of the "
                            .. "virtual-time Tool is left to advance to (an event "
                            .. "from another thread? join it first)", 2)
                    end
                    tool:advance(ms)
                end
            end
        end
        local r = core._result(root)
        if r == nil then
            error("run(): the loop stopped but the flow did not finish", 2)
        end
        if r[1] then
            return unpack(r, 2, r.n)
        end
        error(r[2], 2)
    end

    --- asi:set_trace(traceparent): make `traceparent` (a W3C traceparent
    -- header value) the trace context of this flow's root, from now on, for
    -- the steps of every language and for flows started with new_instance();
    -- nil clears it. A bad value raises an error saying what is wrong and
    -- leaves the context as it was.
    function S.set_trace(asi, traceparent)
        if traceparent ~= nil then
            if type(traceparent) ~= "string" then
                error("set_trace(): traceparent must be a string or nil, not "
                      .. type(traceparent), 2)
            end
            local why = traceparent:find("\0", 1, true)
                and "traceparent contains a NUL character"
                or core.futoin_bind_trace_check(traceparent)
            if why then
                error(("set_trace(%q): %s"):format(traceparent, why), 2)
            end
        end
        local rc = core.futoin_bind_trace_set_at(asi:binary(), traceparent)
        if rc ~= 0 then
            error("set_trace(): refused (" .. rc .. "): not a live handle of "
                  .. "this library on its loop thread", 2)
        end
    end

    --- asi:trace(): the flow's trace context as this step sees it, a table
    -- { trace_id, span_id, parent_span_id, flags, traceparent } (ids in
    -- lowercase hex; traceparent names this step's own span: send it on to
    -- a service the step calls), or nil when the flow has none. Through a
    -- root's own handle span_id is the span the flow continues and
    -- parent_span_id is nil.
    function S.trace(asi)
        local text = core.futoin_bind_trace_get_at(asi:binary())
        if text == nil then
            error("trace(): not a live handle of this library on its loop "
                  .. "thread", 2)
        end
        if text == "" then
            return nil
        end
        local parent = text:sub(57)
        return {
            trace_id = text:sub(4, 35),
            span_id = text:sub(37, 52),
            parent_span_id = parent ~= "" and parent or nil,
            flags = tonumber(text:sub(54, 55), 16),
            traceparent = text:sub(1, 55),
        }
    end

    -- Names: FTN12 §1.10 for Lua keywords, and the spec's camelCase

    S["repeat"] = S.repeat_loop       -- `repeat` and `break` are Lua keywords:
    S["break"] = S.break_loop         -- asi:repeat_loop(), asi:break_loop()
    S["continue"] = S.continue_loop   -- `continue` is not a keyword in Lua
    S.make_loop = S.loop
    S.loop_for_each = S.for_each
    S.add_sync = S.sync
    S.makeLoop = S.loop
    S.repeatLoop = S.repeat_loop
    S.forEach = S.for_each
    S.loopForEach = S.for_each
    S.breakLoop = S.break_loop
    S.continueLoop = S.continue_loop
    S.setTimeout = S.set_timeout
    S.setCancel = S.set_cancel
    S.waitExternal = S.wait_external
    S.successStep = S.success_step
    S.addSync = S.sync
    S.rootId = S.root_id
    S.isValid = S.is_valid
    S.newInstance = S.new_instance

    --- AsyncSteps([tool]): a new root on `tool` (default: default_tool()).
    function M.AsyncSteps(tool)
        local ok, r = pcall(core.root_new, tool or M.default_tool())
        if not ok then
            error(r, 2)
        end
        return r
    end
    M.new = M.AsyncSteps

    --- wrap(ptr [, owned]): adopt a FutoInAsyncSteps* (light userdata) of any
    -- FTN12 implementation; owned = true frees it with the object.
    function M.wrap(ptr, owned)
        local ok, r = pcall(core._wrap, ptr, owned and 1 or 0)
        if not ok then
            error(r, 2)
        end
        return r
    end

    I.S, I.root_mt, I.sync_objects = S, root_mt, sync_objects
end
