--- futoin_async, part "async": coroutine steps, fa.async(fn) and
-- fa.await(asi, x) (also asi:await(x)), and fa.Future(), a minimal
-- future-like value.
--
-- A part of the module futoin_async, run by lib/futoin_async.lua while
-- loading (see there). Uses I.S (the methods of step handles and roots),
-- I.root_mt, I.new_error and I.Bytes (handed to the C glue here, with the
-- coroutines of async steps).

local type, select, pcall, error, setmetatable, getmetatable, tostring =
    type, select, pcall, error, setmetatable, getmetatable, tostring
local co_create, co_resume, co_yield, co_running, co_status, co_close =
    coroutine.create, coroutine.resume, coroutine.yield, coroutine.running,
    coroutine.status, coroutine.close
local pack, unpack = table.pack, table.unpack

return function(M, core, I)
    local S, root_mt, new_error, Bytes = I.S, I.root_mt, I.new_error, I.Bytes

    local AWAIT = setmetatable({}, { __name = "futoin_async.await" })
    local co_asi = setmetatable({}, { __mode = "k" }) -- coroutine -> its asi
    -- step function fa.async() made -> the user's function it runs: async
    -- stacks show the latter (its name and file:line)
    local async_fns = setmetatable({}, { __mode = "k" })
    core._origins(async_fns)

    local function is_callable(f)
        if type(f) == "function" then
            return true
        end
        local mt = getmetatable(f)
        return mt ~= nil and type(mt) == "table" and mt.__call ~= nil
    end

    --- asi:error(code [, info]) (core.error): report an error and leave the
    -- step's code. Inside the step's own callback it raises a handled FutoInError
    -- (the binding swallows it); from outside (completing a waiting step) it
    -- returns true, or false if the step already lost to a timeout or cancel;
    -- in a coroutine step (fa.async) it always unwinds the coroutine.
    core._setup(new_error, Bytes, co_asi)

    -- Subscribe to a future-like value: a function(callback) whose callback
    -- gets (err, ...), an object with :next(on_ok, on_err) (fa.Future, promise
    -- libraries), or a root AsyncSteps (executed; its result). Each outcome
    -- fires once.
    local function subscribe(x, on_ok, on_err)
        local fired = false
        local function ok(...)
            if not fired then
                fired = true
                on_ok(...)
            end
        end
        local function bad(e)
            if not fired then
                fired = true
                on_err(e)
            end
        end
        if getmetatable(x) == root_mt then
            x:execute(nil, function(done, ...)
                if done then
                    ok(...)
                else
                    bad((...))
                end
            end)
        elseif type(x) == "function" then
            x(function(err, ...)
                if err ~= nil and err ~= false then
                    bad(err)
                else
                    ok(...)
                end
            end)
        elseif (type(x) == "table" or type(x) == "userdata") and is_callable(x.next) then
            x:next(ok, bad)
        else
            error("await(x): x must be a function(callback), an object with "
                .. ":next(on_ok, on_err), or a root AsyncSteps; got " .. type(x), 3)
        end
    end

    local drive

    -- A coroutine step that waited (fa.await) returned: its values complete
    -- the step, as a step's return values do (rule 1: a handle, the chaining
    -- result, is no value; trailing nils neither). The coroutine runs outside
    -- the step's callback now: a mistake is reported into the flow, or, when
    -- the step is no longer there to take it, printed.
    local function awaited_result(asi, ...)
        local n = select("#", ...)
        while n > 0 and select(n, ...) == nil do
            n = n - 1
        end
        if n > 0 and core._is_handle((...)) then
            n = 0
        end
        local now = core.status(asi)
        if now == "waiting" or now == "active" then
            if n > 4 then
                core._fail(asi, new_error("InternalError", ("a step returned %d values: "
                    .. "at most 4 (FTN12 FutoInArgs)"):format(n)), nil)
            else
                core.success(asi, unpack(pack(...), 1, n))
            end
        elseif n > 0 and now ~= "lost" then
            io.stderr:write("futoin_async: a coroutine step returned values after it "
                .. "completed its step itself (success()/error()); they are dropped\n")
        end
    end

    -- Resume `co` with `...` and act on what it did.
    local function step_resume(st, ...)
        return drive(st, co_resume(st.co, ...))
    end

    drive = function(st, ok, ...)
        local co, asi = st.co, st.asi
        if co_status(co) == "dead" then
            co_asi[co] = nil
            if ok then
                if not st.waited then
                    -- still inside the step's callback: what the coroutine
                    -- returned is what the step returns (its result, rule 1)
                    return ...
                end
                return awaited_result(asi, ...)
            end
            local e = ...
            if M.is_error(e) and e.handled then
                if not st.waited then
                    error(e, 0) -- inside the callback: the binding swallows it
                end
                return
            end
            local tb = debug.traceback(co, tostring(e))
            if core.status(asi) == "active" or core.status(asi) == "waiting" then
                core._fail(asi, e, tb)
            end
            return
        end
        -- yielded
        local marker, x = ...
        if marker ~= AWAIT then
            co_close(co)
            co_asi[co] = nil
            local msg = "coroutine.yield() in an async step: wait with fa.await()"
            if core.status(asi) == "active" or core.status(asi) == "waiting" then
                core._fail(asi, msg, debug.traceback(msg, 1))
            end
            return
        end
        if not st.waited then
            st.waited = true
            asi:wait_external()
            asi:set_cancel(function()
                st.cancelled = true
                co_asi[co] = nil
                co_close(co)
            end)
        end
        local okc, e = pcall(subscribe, x, function(...)
            if not st.cancelled then
                step_resume(st, true, ...)
            end
        end, function(err)
            if not st.cancelled then
                step_resume(st, false, err)
            end
        end)
        if not okc then
            step_resume(st, false, e) -- raise it where await() was called
        end
    end

    --- fa.async(fn): a step function that runs `fn(asi, ...)` as a coroutine.
    -- Inside, fa.await(asi, x) (or asi:await(x)) waits for a future-like x; the
    -- step waits meanwhile and the coroutine resumes when x completes. What fn
    -- returns is the step's result (success(...)); an error raised in it is the
    -- step's error. Add sub-steps (asi:add) only before the first await.
    function M.async(fn)
        if not is_callable(fn) then
            error("async(fn): fn must be a function, got " .. type(fn), 2)
        end
        local step = function(asi, ...)
            local co = co_create(fn)
            local st = { co = co, asi = asi, waited = false, cancelled = false }
            co_asi[co] = asi
            return step_resume(st, asi, ...)
        end
        async_fns[step] = fn
        return step
    end

    --- fa.await(asi, x): in a step made with fa.async(), wait for x (see
    -- subscribe above) and return its values; a failure is raised here.
    function M.await(asi, x)
        local co = co_running()
        if co_asi[co] == nil then
            error("await(): only inside a step made with fa.async(fn)", 2)
        end
        if co_asi[co] ~= asi then
            error("await(): asi is not the handle of this coroutine's step", 2)
        end
        local function after(ok, ...)
            if ok then
                return ...
            end
            error((...), 0)
        end
        return after(co_yield(AWAIT, x))
    end
    S.await = M.await

    --- Future(): a minimal future-like value: f:resolve(...), f:reject(err),
    -- f:next(on_ok, on_err).
    local Future = { __name = "futoin_async.Future" }
    Future.__index = Future

    function M.Future()
        return setmetatable({ state = "pending", cbs = {} }, Future)
    end

    function Future:resolve(...)
        if self.state ~= "pending" then
            return false
        end
        self.state, self.values = "resolved", pack(...)
        local cbs = self.cbs
        self.cbs = nil
        for i = 1, #cbs do cbs[i][1](unpack(self.values, 1, self.values.n)) end
        return true
    end

    function Future:reject(err)
        if self.state ~= "pending" then
            return false
        end
        self.state, self.err = "rejected", err
        local cbs = self.cbs
        self.cbs = nil
        for i = 1, #cbs do cbs[i][2](err) end
        return true
    end

    function Future:next(on_ok, on_err)
        if self.state == "resolved" then
            on_ok(unpack(self.values, 1, self.values.n))
        elseif self.state == "rejected" then
            on_err(self.err)
        else
            self.cbs[#self.cbs + 1] = { on_ok, on_err }
        end
        return self
    end
end
