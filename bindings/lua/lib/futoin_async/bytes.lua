--- futoin_async, part "bytes": fa.bytes(s) and fa.is_bytes(v), binary data
-- (FTN12 ARRAY|UINT8) as opposed to text.
--
-- A part of the module futoin_async, run by lib/futoin_async.lua while
-- loading (see there). Leaves in I: I.Bytes (the metatable of bytes
-- values; the C glue knows it).

local type, error, setmetatable, getmetatable =
    type, error, setmetatable, getmetatable

return function(M, core, I)
    --- fa.bytes(s): send the string `s` as binary data (FTN12 ARRAY|UINT8)
    -- instead of text. A plain Lua string travels as STRING (byte-exact, embedded
    -- zeros included); binary values of other languages arrive as strings.
    local Bytes = { __name = "futoin_async.bytes" }
    Bytes.__index = Bytes
    function Bytes.__tostring(b) return b[1] end
    function Bytes.__len(b) return #b[1] end

    function Bytes.__eq(a, b) return a[1] == b[1] end
    function Bytes.__concat(a, b)
        return (getmetatable(a) == Bytes and a[1] or a) .. (getmetatable(b) == Bytes and b[1] or b)
    end

    --- b:hex(): the bytes in lowercase hex ("0001ff").
    function Bytes:hex()
        return (self[1]:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
    end

    function M.bytes(s)
        if type(s) ~= "string" then
            error("bytes(s): s must be a string, got " .. type(s), 2)
        end
        return setmetatable({ s }, Bytes)
    end

    --- is_bytes(v): is v an fa.bytes() value (binary data, FTN12 ARRAY|UINT8)?
    function M.is_bytes(v)
        return getmetatable(v) == Bytes
    end

    I.Bytes = Bytes
end
