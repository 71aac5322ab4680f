--- futoin_async, part "polyglot": steps of other languages
-- (asi:add_foreign()), async stacks as Lua tracebacks
-- (fa.format_async_stack(), asi:async_traceback(), err:async_traceback()),
-- and pairs() over a state() table with the state shared between
-- languages.
--
-- A part of the module futoin_async, run by lib/futoin_async.lua while
-- loading (see there). Uses I.S (the methods of step handles and roots)
-- and I.FutoInError.

local type, select, pcall, error, tostring =
    type, select, pcall, error, tostring

return function(M, core, I)
    local S, FutoInError = I.S, I.FutoInError


    local core_add_foreign = core.add_foreign

    --- asi:add_foreign(language, module, function [, onerror]): a step written
    -- in another language ("c", "python", "java", "lua", ...), by name: a
    -- Python function of a module, a public static method of a Java class, a C
    -- function of a shared object, a Lua function of a module. The language's
    -- runtime is started in this process on first use. What cannot be had (no
    -- such language, module or function) still adds a step, which fails with
    -- InvalidRequest naming them. Returns self and whether the step was
    -- resolved; with `onerror` (a Lua error handler around the step) it is
    -- resolved when the flow gets there, and only self is returned.
    local function foreign_arg(v, i)
        if type(v) ~= "string" then
            error(("add_foreign(language, module, function, onerror): %s must be a "
                .. "string, got %s"):format(i, type(v)), 3)
        end
        if v:find("\0", 1, true) then
            error(("add_foreign(language, module, function, onerror): %s must not "
                .. "contain an embedded NUL"):format(i), 3)
        end
    end

    function S.add_foreign(asi, language, module, fn, onerror)
        foreign_arg(language, "language")
        foreign_arg(module, "module")
        foreign_arg(fn, "function")
        if onerror == nil then
            local ok, self, resolved = pcall(core_add_foreign, asi, language, module, fn)
            if not ok then
                error(self, 2)
            end
            return self, resolved
        end
        -- The guard is the level `onerror` sits on; async stacks show it as
        -- this add_foreign() call at the caller's line.
        local at = debug.getinfo(2, "Sl")
        local file = at and (at.source:sub(1, 1) == "@" and at.source:sub(2) or at.short_src)
        local ok, e = pcall(core._add_as, asi, function(a, ...)
            if select("#", ...) > 0 then
                a:success_step(...) -- the values go on to the foreign step
            end
            core_add_foreign(a, language, module, fn)
        end, onerror, ("add_foreign(%s, %s, %s)"):format(language, module, fn),
            file or "", at and at.currentline or 0)
        if not ok then
            error(e, 2)
        end
        return asi
    end
    S.addForeign = S.add_foreign

    --- format_async_stack(frames [, message]): an async stack (asi:async_stack(),
    -- err.async_stack) as a Lua traceback:
    --   message
    --   async stack traceback:
    --   	[java] Fragments.java:41: in function 'org.futoin.polyglot.Fragments.fail'
    --   	[lua] host.lua:12: in function <host.lua:12>
    function M.format_async_stack(frames, message)
        if frames == nil then
            return message
        end
        local out = {}
        if message ~= nil then
            out[1] = tostring(message)
        end
        out[#out + 1] = "async stack traceback:"
        for i = 1, #frames do
            local f = frames[i]
            local where = f.file and (f.line and f.line > 0 and (f.file .. ":" .. f.line) or f.file) or "?"
            local what
            if f["function"] then
                what = "in function '" .. f["function"] .. "'"
            else
                what = "in function <" .. where .. ">"
            end
            out[#out + 1] = ("\t[%s] %s: %s"):format(f.language or "?", where, what)
            if frames.elided and frames.elided > 0 and i == frames.elided_after then
                out[#out + 1] = ("\t...\t(skipping %d levels)"):format(frames.elided)
            end
        end
        return table.concat(out, "\n")
    end

    --- asi:async_traceback([message]): the flow's last error's async stack as
    -- a Lua traceback (nil when no error was recorded).
    function S.async_traceback(asi, message)
        local frames = core.async_stack(asi)
        if frames == nil then
            return nil
        end
        return M.format_async_stack(frames, message)
    end

    -- pairs() over a state() table: its own keys, then the shared variables it
    -- set (the shared store cannot list what other languages set: read those
    -- by name).
    local state_names = core._state_names
    local STATE_ID, STATE_NAMES = core._state_keys()
    core._state_mt().__pairs = function(t)
        local names = state_names(t)
        local own, key = true, nil
        return function()
            while own do
                local k, v = next(t, key)
                if k == nil then
                    own, key = false, nil
                    break
                end
                key = k
                if k ~= STATE_ID and k ~= STATE_NAMES then
                    return k, v
                end
            end
            while names do
                local k = next(names, key)
                if k == nil then
                    return nil
                end
                key = k
                if rawget(t, k) == nil then
                    local v = t[k]
                    if v ~= nil then
                        return k, v
                    end
                end
            end
        end, t, nil
    end

    --- err:async_traceback(): the async stack of a flow's error (raised by
    -- root:run()) as a Lua traceback, headed by the error itself.
    function FutoInError:async_traceback()
        return M.format_async_stack(rawget(self, "async_stack"), tostring(self))
    end
end
