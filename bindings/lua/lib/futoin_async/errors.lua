--- futoin_async, part "errors": FutoInError, the class of every error
-- code (fa.errors.<Code>), the standard codes (fa.Errors), is_error(),
-- is_cancelled(), fa.CancelledError.
--
-- A part of the module futoin_async, not a module of its own:
-- lib/futoin_async.lua runs it while loading (see there). It adds to M and
-- leaves in I what later parts use: I.FutoInError (the base class),
-- I.new_error(code, info, handled).

local type, error, setmetatable, getmetatable, tostring =
    type, error, setmetatable, getmetatable, tostring

return function(M, core, I)
    --- FutoInError: an FTN12 error, `code` (e.g. "Timeout") and `info`.
    -- asi:error(code, info) reports an error to the flow and raises one of
    -- these (marked `handled`); raising one yourself in a step does the same.
    local FutoInError = { __futoin_error = true, __name = "futoin_async.FutoInError" }
    FutoInError.__index = FutoInError

    function FutoInError.__tostring(e)
        if e.info ~= nil then
            return tostring(e.code) .. ": " .. tostring(e.info)
        end
        return tostring(e.code)
    end

    --- err:is(code_or_class): does the error have this code?
    function FutoInError:is(what)
        if type(what) == "table" then
            what = what.code
        end
        return self.code == what
    end

    local Errors = {}   -- code -> code, the standard FTN12 codes
    M.Errors = Errors

    -- Why `code` cannot be an error code (nil if it can): a non-empty string
    -- without an embedded NUL (the runtime takes C strings).
    local function bad_code(code)
        if type(code) ~= "string" then
            return "must be a string, got " .. type(code)
        elseif code == "" then
            return "must not be empty"
        elseif code:find("\0", 1, true) then
            return "must not contain an embedded NUL"
        end
    end

    -- The class of one code: `cls(info)` makes an error of it; `e:is(cls)`,
    -- getmetatable(e) == cls.
    local function make_class(code, description)
        local cls = setmetatable({
            code = code,
            description = description,
            __futoin_error = true,
            __name = "futoin_async." .. code,
            __tostring = FutoInError.__tostring,
        }, {
            __index = FutoInError,
            __call = function(c, info) return setmetatable({ code = code, info = info }, c) end,
        })
        cls.__index = cls
        return cls
    end

    --- fa.errors.<Code>: the class of ANY error code, made on first use and
    -- kept, so that `e:is(fa.errors.NotFound)`, `getmetatable(e) ==
    -- fa.errors.NotFound` and `fa.errors.NotFound("why")` work for codes of
    -- every language, not only the standard FTN12 ones. Indexing with a string
    -- that cannot be a code (empty, with a NUL) raises; other keys give nil.
    local classes = setmetatable({}, {
        __index = function(t, code)
            if type(code) ~= "string" then
                return nil
            end
            local why = bad_code(code)
            if why then
                error("fa.errors[code]: code " .. why, 2)
            end
            local cls = make_class(code)
            rawset(t, code, cls)
            return cls
        end,
    })
    M.errors = classes

    local function new_error(code, info, handled)
        -- a code that cannot have a class (an empty one from another
        -- implementation) still makes an error, of the base class
        local cls = bad_code(code) and FutoInError or classes[code]
        return setmetatable({ code = code, info = info, handled = handled or nil }, cls)
    end

    --- FutoInError(code, info): a new error object, of the code's class
    -- (fa.errors[code]).
    M.FutoInError = setmetatable({ class = FutoInError }, {
        __call = function(_, code, info)
            local why = bad_code(code)
            if why then
                error("FutoInError(code, info): code " .. why, 2)
            end
            return new_error(code, info)
        end,
    })

    for i = 0, core.futoin_error_count() - 1 do
        local code = core.futoin_error_code_at(i)
        Errors[code] = code
        rawset(classes, code, make_class(code, core.futoin_error_description_at(i)))
    end

    --- fa.CancelledError: the class of the error root:run() raises (and
    -- root:result() / execute()'s on_done give) for a cancelled root: code
    -- "Cancelled". fa.is_cancelled(e) tells it.
    M.CancelledError = classes.Cancelled

    --- is_cancelled(e): is `e` the error of a cancelled root?
    function M.is_cancelled(e)
        return type(e) == "table" and getmetatable(e) == M.CancelledError
    end

    --- is_error(e [, code]): is `e` a FutoInError (with this code)?
    function M.is_error(e, code)
        if type(e) ~= "table" then
            return false
        end
        local mt = getmetatable(e)
        if not mt or not mt.__futoin_error then
            return false
        end
        return code == nil or e.code == code or (type(code) == "table" and e.code == code.code)
    end

    I.FutoInError, I.new_error = FutoInError, new_error
end
