-- A Tool on luv's own libuv loop (Debian lua-luv, built against the system
-- libuv): luv timers and sockets and our steps run in one loop, driven by
-- one uv.run().
local H = require "helper"
local fa = H.fa
local uv = require "luv"

local function mapped(pattern)
    local seen = {}
    for line in io.lines("/proc/self/maps") do
        local path = line:match("%s(/%S+)$")
        if path and path:find(pattern) then seen[path] = true end
    end
    local list = {}
    for p in pairs(seen) do list[#list + 1] = p end
    return list
end

describe("luv", function()
    local tool
    setup(function() tool = fa.Tool { loop = "luv" } end)

    it("shares luv's loop: one libuv and one runtime in the process", function()
        assert.is_true(tool:attached())
        assert.are.equal(1, #mapped("libuv%.so"))
        assert.are.equal(1, #mapped("libfutoin_async%.so"))
        assert.truthy(mapped("luv%.so")[1])
        assert.truthy(tostring(H.raises(tool.run, tool)):find("uv.run()", 1, true))
    end)

    it("a luv timer completes a waiting step; one uv.run() drives both", function()
        local log = {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            log[#log + 1] = "step 1"
            asi:wait_external()
            local t = uv.new_timer()
            t:start(10, 0, function()
                t:close()
                log[#log + 1] = "luv timer"
                asi:success("from luv", 7)
            end)
        end)
        root:add(function(asi, s, n)
            log[#log + 1] = "step 2 " .. s .. " " .. n
        end)
        root:execute()
        uv.run()
        assert.are.same({ "step 1", "luv timer", "step 2 from luv 7" }, log)
        assert.are.equal(0, tool:executing())
    end)

    it("root:run() on a luv tool runs luv's loop until the root is done", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:wait_external()
            local t = uv.new_timer()
            t:start(5, 0, function() t:close(); asi:success(99) end)
        end)
        assert.are.equal(99, root:run())
    end)

    it("a luv TCP connection on 127.0.0.1 completes steps", function()
        local log = {}
        local server = uv.new_tcp()
        assert(server:bind("127.0.0.1", 0))
        local port = server:getsockname().port
        local root = fa.AsyncSteps(tool)
        -- step 1: listen, and wait for one line from a client
        root:add(function(asi)
            asi:wait_external()
            assert(server:listen(8, function(err)
                assert(not err, err)
                local conn = uv.new_tcp()
                server:accept(conn)
                conn:read_start(function(rerr, data)
                    if rerr or not data then
                        conn:close()
                        return
                    end
                    log[#log + 1] = "server got " .. data
                    conn:write("pong:" .. data, function()
                        conn:close()
                        server:close()
                    end)
                    asi:success(data)
                end)
            end))
            -- the client connects from a second flow of the same loop
            local client_flow = fa.AsyncSteps(tool)
            client_flow:add(function(c)
                c:wait_external()
                local client = uv.new_tcp()
                client:connect("127.0.0.1", port, function(cerr)
                    assert(not cerr, cerr)
                    client:write("ping")
                    client:read_start(function(rerr, data)
                        if data then
                            log[#log + 1] = "client got " .. data
                            client:close()
                            c:success(data)
                        elseif rerr or not data then
                            client:close()
                        end
                    end)
                end)
            end)
            client_flow:add(function(c, reply) log[#log + 1] = "client flow done " .. reply end)
            client_flow:execute()
        end)
        root:add(function(asi, data) log[#log + 1] = "server flow done " .. data end)
        root:execute()
        uv.run()
        assert.are.same({ "server got ping", "server flow done ping",
            "client got pong:ping", "client flow done pong:ping" }, log)
    end)

    it("a coroutine step awaits luv callbacks", function()
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi)
            local function sleep(ms)
                return function(cb)
                    local t = uv.new_timer()
                    t:start(ms, 0, function() t:close(); cb(nil, ms) end)
                end
            end
            local a = fa.await(asi, sleep(3))
            local b = fa.await(asi, sleep(2))
            local st = fa.await(asi, function(cb) uv.fs_stat("/", cb) end)
            return a + b, st.type
        end))
        local sum, kind = root:run()
        assert.are.equal(5, sum)
        assert.are.equal("directory", kind)
    end)

    it("our immediates and timers run under uv.run() too", function()
        local log = {}
        tool:immediate(function() log[#log + 1] = "imm" end)
        tool:deferred(3, function() log[#log + 1] = "deferred" end)
        uv.run()
        table.sort(log) -- luv runs due timers before immediates: no order
        assert.are.same({ "deferred", "imm" }, log)
    end)
end)
