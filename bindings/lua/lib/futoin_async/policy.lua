--- futoin_async, part "policy": the load policy, what flows may add by
-- name (asi:add_foreign(), and steps of other languages in them): an
-- allow-list of languages and of "language:module" rules
-- (futoin_host_policy_set() of futoin/sys/host.h), per Tool
-- (fa.Tool{ allow = ... }, tool:set_load_policy{...}) or for the process
-- (fa.set_load_policy{...}).
--
-- A part of the module futoin_async, run by lib/futoin_async.lua while
-- loading (see there). Leaves in I: I.load_policy = { check, apply } for
-- the part "tool".

local type, error, pairs, pcall, tostring, math_type =
    type, error, pairs, pcall, tostring, math.type

local EBUSY, EINVAL, ENOMEM = -16, -22, -12 -- FUTOIN_E*

return function(M, core, I)
    local KEYS = { languages = true, modules = true }

    -- A language name as the library takes one: 1 to 32 ASCII letters,
    -- digits, "_" or "-".
    local function language_ok(name)
        return #name >= 1 and #name <= 32 and not name:find("[^A-Za-z0-9_%-]")
    end

    -- The list policy[key]: nil, or a sequence of strings; nil or the
    -- message saying what is wrong with it.
    local function check_list(list, key, where)
        if list == nil then
            return nil
        end
        if type(list) ~= "table" then
            return ("%s: %s must be a list of strings (a sequence table), got %s")
                :format(where, key, type(list))
        end
        local n, count = #list, 0
        for k in pairs(list) do
            if math_type(k) ~= "integer" or k < 1 or k > n then
                return ("%s: %s must be a list of strings (a sequence table), "
                    .. "has the key %s"):format(where, key,
                    type(k) == "string" and ("'" .. k .. "'") or tostring(k))
            end
            count = count + 1
        end
        if count ~= n then
            return ("%s: %s must be a list of strings (a sequence table), has a hole")
                :format(where, key)
        end
        for i = 1, n do
            local e = list[i]
            local what = ("%s: %s[%d]"):format(where, key, i)
            if type(e) ~= "string" then
                return ("%s must be a string, got %s"):format(what, type(e))
            elseif e:find("\0", 1, true) then
                return what .. " must not contain an embedded NUL"
            end
            if key == "languages" then
                if not language_ok(e) then
                    return ("%s: '%s' is not a language name (1 to 32 letters, "
                        .. "digits, '_' or '-')"):format(what, e)
                end
            else
                local language, module = e:match("^([^:]*):(.*)$")
                if not language or language == "" then
                    return ("%s: '%s' is not a rule 'language:module' (e.g. "
                        .. "'lua:pricing', 'java:org.example.*')"):format(what, e)
                elseif not language_ok(language) then
                    return ("%s: '%s': '%s' is not a language name"):format(what, e, language)
                elseif module == "" then
                    return ("%s: '%s' names no module"):format(what, e)
                elseif module:sub(1, -2):find("*", 1, true) then
                    return ("%s: '%s': '*' is only allowed last (a prefix rule, "
                        .. "e.g. 'java:org.example.*')"):format(what, e)
                end
            end
        end
        return nil
    end

    -- check(policy, where): nil if `policy` is { languages = {...},
    -- modules = {...} } (both optional), else the message saying why not.
    local function check(policy, where)
        if type(policy) ~= "table" then
            return ("%s: the policy must be a table { languages = {...}, "
                .. "modules = {...} }, got %s"):format(where, type(policy))
        end
        for k in pairs(policy) do
            if not KEYS[k] then
                return ("%s: unknown key %s (languages, modules)"):format(where,
                    type(k) == "string" and ("'" .. k .. "'") or tostring(k))
            end
        end
        return check_list(policy.languages, "languages", where)
            or check_list(policy.modules, "modules", where)
    end

    -- outcome(rc, whose, where): nil if the library took the policy, else
    -- the message saying why not.
    local function outcome(rc, whose, where)
        if rc == 0 then
            return nil
        elseif rc == EBUSY then
            return ("%s: %s has a load policy already; it is set once, so that "
                .. "code running in a flow cannot widen it"):format(where, whose)
        elseif rc == ENOMEM then
            return where .. ": out of memory"
        elseif rc == EINVAL then -- check() lets through what the library takes
            return where .. ": the library refused the policy"
        end
        return ("%s: futoin_host_policy_set() failed (%d)"):format(where, rc)
    end

    I.load_policy = {
        check = check,
        -- set(tool, policy, where): the checked policy of `tool`; nil or why
        -- not (a borrowed or closed tool: the glue's message)
        set = function(tool, policy, where)
            local ok, rc = pcall(core.tool_policy_set, tool, policy.languages, policy.modules)
            if not ok then
                return tostring(rc)
            end
            return outcome(rc, "this Tool", where)
        end,
    }

    --- fa.set_load_policy{ languages = {...}, modules = {...} }: restrict what
    -- every flow of this process may load by name, on top of each Tool's
    -- own policy (a step must pass both). languages: the languages a step
    -- may be written in ({} allows none; absent: all). modules: rules
    -- "language:name", the exact name or a prefix followed by "*"
    -- ("java:org.example.*"; absent: every module of an allowed language).
    -- A step outside it fails with InvalidRequest naming the rule. Set once
    -- per process, whichever language sets it: a second call raises.
    function M.set_load_policy(policy)
        local where = "set_load_policy()"
        local why = check(policy, where)
        if why then
            error(why, 2)
        end
        why = outcome(core.policy_set(policy.languages, policy.modules), "this process", where)
        if why then
            error(why, 2)
        end
    end
end
