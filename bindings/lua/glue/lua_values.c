/*
 * FutoInBinaryValue <-> Lua (FTN12 §2.7 values).
 *
 * Out of Lua: integer -> INT64, float -> DOUBLE, boolean -> BOOL, string ->
 * STRING (a malloc'ed NUL-terminated copy; `length` is the byte length, so
 * embedded zeros survive), fa.bytes(s) -> ARRAY|UINT8, a plain table (no
 * metatable) that is a non-empty sequence of numbers and nothing else ->
 * ARRAY|INT64 (all integers) or ARRAY|DOUBLE, nil -> a custom value that
 * means nil, an Opaque (a value of another language) -> moved back out.
 * Anything else (tables, functions, userdata, coroutines) -> a custom value
 * holding one registry reference, dropped by the type's cleanup exactly once.
 *
 * Into Lua: every base type and every ARRAY|base type. Integers become Lua
 * integers (UINT64 above math.maxinteger becomes a float), FLOAT/DOUBLE
 * floats, STRING/STRING16/STRING32 UTF-8 strings, ARRAY|UINT8 an
 * fa.bytes() value (a string when the Lua layer is not loaded),
 * numeric and boolean arrays sequences. Custom values of this state come
 * back as the very Lua value; values of another language (or arrays of
 * strings/objects, whose layout is not Lua's business) are MOVED into an
 * Opaque object that can be passed on to a next step and is cleaned up by
 * its __gc otherwise.
 */
#include "futoin_lua.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_p(FutoInBinaryValue* v)
{
    free((void*)v->p);
}

static void custom_cleanup(FutoInBinaryValue* v)
{
    fl_ctx* ctx = v->custom_data;
    if (ctx) {
        fl_unref(ctx, (int)(intptr_t)v->p);
    }
}

const FutoInType fl_ty_bool = {FTN_TYPE_BOOL, NULL};
const FutoInType fl_ty_i64 = {FTN_TYPE_INT64, NULL};
const FutoInType fl_ty_double = {FTN_TYPE_DOUBLE, NULL};
#define ty_bool fl_ty_bool
#define ty_i64 fl_ty_i64
#define ty_double fl_ty_double
static const FutoInType ty_str = {FTN_TYPE_STRING, free_p};
static const FutoInType ty_bytes = {FTN_TYPE_ARRAY | FTN_TYPE_UINT8, free_p};
static const FutoInType ty_i64arr = {FTN_TYPE_ARRAY | FTN_TYPE_INT64, free_p};
static const FutoInType ty_darr = {FTN_TYPE_ARRAY | FTN_TYPE_DOUBLE, free_p};
/* Custom values of Lua: `p` is the registry reference, `custom_data` the
 * context (so the cleanup knows the state). Recognised by address. */
static const FutoInType ty_custom = {FTN_TYPE_CUSTOM_OBJECT, custom_cleanup};
/* nil: a custom value without payload. */
static const FutoInType ty_nil = {FTN_TYPE_CUSTOM_OBJECT, NULL};

void fl_set_custom(lua_State* L, fl_ctx* ctx, int idx, FutoInBinaryValue* v)
{
    lua_pushvalue(L, idx);
    v->p = (const void*)(intptr_t)fl_ref(L, ctx);
    v->type = &ty_custom;
    v->custom_data = ctx;
    v->length = 0;
}

void fl_custom_adopt(fl_ctx* ctx, int ref, FutoInBinaryValue* v)
{
    v->type = &ty_custom;
    v->p = (const void*)(intptr_t)ref;
    v->custom_data = ctx;
    v->length = 0;
}

int fl_push_custom(lua_State* L, fl_ctx* ctx, const FutoInBinaryValue* v)
{
    if (v && v->type == &ty_custom && v->custom_data == ctx) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, (int)(intptr_t)v->p);
        return 1;
    }
    if (v && v->type == &ty_nil) {
        lua_pushnil(L);
        return 1;
    }
    return 0;
}

/* A plain table that is a sequence 1..n of numbers and has no other key:
 * returns n (0 if not such a table), *all_int says whether every element
 * is an integer. */
static lua_Integer number_sequence(lua_State* L, int idx, int* all_int)
{
    lua_Integer n, i, keys = 0;
    if (lua_getmetatable(L, idx)) {
        lua_pop(L, 1);
        return 0;
    }
    n = (lua_Integer)lua_rawlen(L, idx);
    if (n <= 0 || n > (lua_Integer)UINT32_MAX) {
        return 0;
    }
    *all_int = 1;
    for (i = 1; i <= n; ++i) {
        int t = lua_rawgeti(L, idx, i);
        if (t != LUA_TNUMBER) {
            lua_pop(L, 1);
            return 0;
        }
        if (!lua_isinteger(L, -1)) {
            *all_int = 0;
        }
        lua_pop(L, 1);
    }
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (++keys > n) {
            lua_pop(L, 1);
            return 0;
        }
    }
    return keys == n ? n : 0;
}

static int is_bytes(lua_State* L, fl_ctx* ctx, int idx)
{
    int yes;
    if (ctx->bytes_mt == LUA_NOREF || !lua_getmetatable(L, idx)) {
        return 0;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->bytes_mt);
    yes = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return yes;
}

int fl_to_binval(lua_State* L, fl_ctx* ctx, int idx, FutoInBinaryValue* v)
{
    v->type = NULL;
    v->u64 = 0;
    v->custom_data = NULL;
    v->length = 0;
    if (idx < 0 && idx > LUA_REGISTRYINDEX) {
        idx = lua_absindex(L, idx);
    }
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
    case LUA_TNONE:
        v->type = &ty_nil;
        return 0;
    case LUA_TBOOLEAN:
        v->type = &ty_bool;
        v->b = lua_toboolean(L, idx) != 0;
        return 0;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            v->type = &ty_i64;
            v->i64 = (int64_t)lua_tointeger(L, idx);
        } else {
            v->type = &ty_double;
            v->d = (double)lua_tonumber(L, idx);
        }
        return 0;
    case LUA_TSTRING: {
        size_t len;
        const char* s = lua_tolstring(L, idx, &len);
        char* c;
        if (len > UINT32_MAX - 1) {
            break; /* too long for `length`: travels as a custom value */
        }
        c = malloc(len + 1);
        if (!c) {
            return FL_ENOMEM;
        }
        memcpy(c, s, len + 1);
        v->type = &ty_str;
        v->cstr = c;
        v->length = (uint32_t)len;
        return 0;
    }
    case LUA_TTABLE: {
        int all_int = 1;
        lua_Integer n;
        if (is_bytes(L, ctx, idx)) {
            size_t len;
            const char* s;
            lua_rawgeti(L, idx, 1);
            s = lua_tolstring(L, -1, &len);
            if (s && len <= UINT32_MAX) {
                char* c = malloc(len ? len : 1);
                lua_pop(L, 1); /* s stays valid: the table holds it */
                if (!c) {
                    return FL_ENOMEM;
                }
                memcpy(c, s, len);
                v->type = &ty_bytes;
                v->p = c;
                v->length = (uint32_t)len;
                return 0;
            }
            lua_pop(L, 1);
            break;
        }
        n = number_sequence(L, idx, &all_int);
        if (n > 0) {
            void* buf = malloc((size_t)n * 8);
            if (!buf) {
                return FL_ENOMEM;
            }
            for (lua_Integer i = 1; i <= n; ++i) {
                lua_rawgeti(L, idx, i);
                if (all_int) {
                    ((int64_t*)buf)[i - 1] = (int64_t)lua_tointeger(L, -1);
                } else {
                    ((double*)buf)[i - 1] = (double)lua_tonumber(L, -1);
                }
                lua_pop(L, 1);
            }
            v->type = all_int ? &ty_i64arr : &ty_darr;
            v->p = buf;
            v->length = (uint32_t)n;
            return 0;
        }
        break;
    }
    case LUA_TUSERDATA: {
        FutoInBinaryValue* o;
        if (!lua_getmetatable(L, idx)) {
            break;
        }
        lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->mt[FL_MT_OPAQUE]);
        if (!lua_rawequal(L, -1, -2)) {
            lua_pop(L, 2);
            break;
        }
        lua_pop(L, 2);
        o = lua_touserdata(L, idx);
        if (!o->type) {
            return FL_ESPENT;
        }
        *v = *o; /* move the value back out */
        memset(o, 0, sizeof(*o));
        return 0;
    }
    default:
        break;
    }
    fl_set_custom(L, ctx, idx, v);
    return 0;
}

/* ---- into Lua ------------------------------------------------------------ */

static void push_utf8(luaL_Buffer* b, uint32_t c)
{
    char out[4];
    size_t n;
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
        c = 0xFFFD;
    }
    if (c < 0x80) {
        out[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        out[0] = (char)(0xC0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3F));
        n = 2;
    } else if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        n = 3;
    } else {
        out[0] = (char)(0xF0 | (c >> 18));
        out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[3] = (char)(0x80 | (c & 0x3F));
        n = 4;
    }
    luaL_addlstring(b, out, n);
}

static void push_utf16(lua_State* L, const char16_t* s, size_t len)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < len; ++i) {
        uint32_t c = s[i];
        if (c >= 0xD800 && c <= 0xDBFF && i + 1 < len && s[i + 1] >= 0xDC00
            && s[i + 1] <= 0xDFFF) {
            c = 0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00);
            ++i;
        }
        push_utf8(&b, c);
    }
    luaL_pushresult(&b);
}

static void push_utf32(lua_State* L, const char32_t* s, size_t len)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < len; ++i) {
        push_utf8(&b, (uint32_t)s[i]);
    }
    luaL_pushresult(&b);
}

static void push_u64(lua_State* L, uint64_t x)
{
    if (x <= (uint64_t)LUA_MAXINTEGER) {
        lua_pushinteger(L, (lua_Integer)x);
    } else {
        lua_pushnumber(L, (lua_Number)x);
    }
}

/* One element of a numeric/boolean array. */
static void push_elem(lua_State* L, const void* p, int base, uint32_t i)
{
    switch (base) {
    case FTN_TYPE_BOOL: lua_pushboolean(L, ((const bool*)p)[i]); break;
    case FTN_TYPE_INT8: lua_pushinteger(L, ((const int8_t*)p)[i]); break;
    case FTN_TYPE_INT16: lua_pushinteger(L, ((const int16_t*)p)[i]); break;
    case FTN_TYPE_INT32: lua_pushinteger(L, ((const int32_t*)p)[i]); break;
    case FTN_TYPE_INT64: lua_pushinteger(L, ((const int64_t*)p)[i]); break;
    case FTN_TYPE_UINT16: lua_pushinteger(L, ((const uint16_t*)p)[i]); break;
    case FTN_TYPE_UINT32: lua_pushinteger(L, ((const uint32_t*)p)[i]); break;
    case FTN_TYPE_UINT64: push_u64(L, ((const uint64_t*)p)[i]); break;
    case FTN_TYPE_FLOAT: lua_pushnumber(L, ((const float*)p)[i]); break;
    case FTN_TYPE_DOUBLE: lua_pushnumber(L, ((const double*)p)[i]); break;
    default: lua_pushnil(L); break;
    }
}

/* Move `v` into a new Opaque object. */
static void push_opaque(lua_State* L, fl_ctx* ctx, FutoInBinaryValue* v)
{
    FutoInBinaryValue* o = lua_newuserdatauv(L, sizeof(*o), 0);
    *o = *v;
    memset(v, 0, sizeof(*v));
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->mt[FL_MT_OPAQUE]);
    lua_setmetatable(L, -2);
}

void fl_push_binval(lua_State* L, fl_ctx* ctx, FutoInBinaryValue* v)
{
    int flags, base;
    if (!v->type) {
        lua_pushnil(L);
        return;
    }
    flags = v->type->flags;
    base = flags & FTN_BASE_TYPE_MASK;
    if (flags & FTN_TYPE_ARRAY) {
        if (base == FTN_TYPE_UINT8) {
            /* binary data: an fa.bytes() value, so that it stays binary
             * when it is passed on (a Lua string would go out as text) */
            if (ctx->bytes_mt != LUA_NOREF) {
                lua_createtable(L, 1, 0);
            }
            lua_pushlstring(L, v->p ? (const char*)v->p : "", v->p ? v->length : 0);
            if (ctx->bytes_mt != LUA_NOREF) {
                lua_rawseti(L, -2, 1);
                lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->bytes_mt);
                lua_setmetatable(L, -2);
            }
            return;
        }
        if (base >= FTN_TYPE_BOOL && base <= FTN_TYPE_DOUBLE && (v->p || !v->length)) {
            lua_createtable(L, (int)(v->length > 1u << 24 ? 0 : v->length), 0);
            for (uint32_t i = 0; i < v->length; ++i) {
                push_elem(L, v->p, base, i);
                lua_rawseti(L, -2, (lua_Integer)i + 1);
            }
            return;
        }
        push_opaque(L, ctx, v);
        return;
    }
    switch (base) {
    case FTN_TYPE_CUSTOM_OBJECT:
        if (!fl_push_custom(L, ctx, v)) {
            push_opaque(L, ctx, v);
        }
        return;
    case FTN_TYPE_STRING: {
        size_t len = v->length;
        if (!v->cstr) {
            lua_pushliteral(L, "");
            return;
        }
        if (!len) {
            len = strlen(v->cstr);
        }
        lua_pushlstring(L, v->cstr, len);
        return;
    }
    case FTN_TYPE_STRING16: {
        size_t len = v->length;
        if (!len && v->cstr16) {
            while (v->cstr16[len]) {
                ++len;
            }
        }
        push_utf16(L, v->cstr16, v->cstr16 ? len : 0);
        return;
    }
    case FTN_TYPE_STRING32: {
        size_t len = v->length;
        if (!len && v->cstr32) {
            while (v->cstr32[len]) {
                ++len;
            }
        }
        push_utf32(L, v->cstr32, v->cstr32 ? len : 0);
        return;
    }
    case FTN_TYPE_BOOL: lua_pushboolean(L, v->b); return;
    case FTN_TYPE_INT8: lua_pushinteger(L, v->i8); return;
    case FTN_TYPE_INT16: lua_pushinteger(L, v->i16); return;
    case FTN_TYPE_INT32: lua_pushinteger(L, v->i32); return;
    case FTN_TYPE_INT64: lua_pushinteger(L, (lua_Integer)v->i64); return;
    case FTN_TYPE_UINT8: lua_pushinteger(L, v->u8); return;
    case FTN_TYPE_UINT16: lua_pushinteger(L, v->u16); return;
    case FTN_TYPE_UINT32: lua_pushinteger(L, v->u32); return;
    case FTN_TYPE_UINT64: push_u64(L, v->u64); return;
    case FTN_TYPE_FLOAT: lua_pushnumber(L, v->f); return;
    case FTN_TYPE_DOUBLE: lua_pushnumber(L, v->d); return;
    default: push_opaque(L, ctx, v); return;
    }
}

void fl_args_reset(FutoInArgs* a)
{
    for (int i = 0; i < 4; ++i) {
        futoin_reset_binval(&a->args[i]);
    }
}

/* A spent Opaque is looked for before anything is converted, so that a
 * refused call moves nothing; out of memory cleans up what was converted. */
static int is_spent_opaque(lua_State* L, fl_ctx* ctx, int idx)
{
    int yes = 0;
    if (lua_type(L, idx) == LUA_TUSERDATA && lua_getmetatable(L, idx)) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->mt[FL_MT_OPAQUE]);
        if (lua_rawequal(L, -1, -2)) {
            yes = ((FutoInBinaryValue*)lua_touserdata(L, idx))->type == NULL;
        }
        lua_pop(L, 2);
    }
    return yes;
}

void fl_args_from(lua_State* L, fl_ctx* ctx, int idx, int n, FutoInArgs* a)
{
    if (n < 4) {
        memset(&a->args[n], 0, sizeof(a->args[0]) * (size_t)(4 - n));
    }
    for (int i = 0; i < n; ++i) {
        if (lua_type(L, idx + i) == LUA_TUSERDATA && is_spent_opaque(L, ctx, idx + i)) {
            luaL_error(L, "value #%d: this value of another language was "
                          "already passed on (an Opaque moves, once)", i + 1);
        }
    }
    for (int i = 0; i < n; ++i) {
        if (fl_to_binval(L, ctx, idx + i, &a->args[i]) != 0) {
            for (int j = i; j < 4; ++j) {
                memset(&a->args[j], 0, sizeof(a->args[j]));
            }
            fl_args_reset(a);
            luaL_error(L, "futoin_async: out of memory");
        }
    }
}

int fl_push_args(lua_State* L, fl_ctx* ctx, const FutoInArgs* a)
{
    int n = 0;
    if (!a) {
        return 0;
    }
    luaL_checkstack(L, 4, "futoin_async: values");
    while (n < 4 && a->args[n].type) {
        /* The args belong to the runtime for the duration of the call;
         * values Lua cannot hold are moved out (the runtime's cleanup then
         * sees an empty slot). */
        fl_push_binval(L, ctx, (FutoInBinaryValue*)&a->args[n]);
        ++n;
    }
    return n;
}

/* Values that become Lua values without allocating: numbers, booleans,
 * custom values of this state (a registry read) and nil. */
static int push_plain(lua_State* L, fl_ctx* ctx, const FutoInBinaryValue* v)
{
    int flags = v->type->flags;
    if (flags & FTN_TYPE_ARRAY) {
        return 0;
    }
    switch (flags & FTN_BASE_TYPE_MASK) {
    case FTN_TYPE_CUSTOM_OBJECT: return fl_push_custom(L, ctx, v);
    case FTN_TYPE_BOOL: lua_pushboolean(L, v->b); return 1;
    case FTN_TYPE_INT8: lua_pushinteger(L, v->i8); return 1;
    case FTN_TYPE_INT16: lua_pushinteger(L, v->i16); return 1;
    case FTN_TYPE_INT32: lua_pushinteger(L, v->i32); return 1;
    case FTN_TYPE_INT64: lua_pushinteger(L, (lua_Integer)v->i64); return 1;
    case FTN_TYPE_UINT8: lua_pushinteger(L, v->u8); return 1;
    case FTN_TYPE_UINT16: lua_pushinteger(L, v->u16); return 1;
    case FTN_TYPE_UINT32: lua_pushinteger(L, v->u32); return 1;
    case FTN_TYPE_UINT64: push_u64(L, v->u64); return 1;
    case FTN_TYPE_FLOAT: lua_pushnumber(L, v->f); return 1;
    case FTN_TYPE_DOUBLE: lua_pushnumber(L, v->d); return 1;
    default: return 0;
    }
}

int fl_push_args_plain(lua_State* L, fl_ctx* ctx, const FutoInArgs* a)
{
    int n = 0;
    if (!a) {
        return 0;
    }
    while (n < 4 && a->args[n].type) {
        if (!push_plain(L, ctx, &a->args[n])) {
            lua_pop(L, n);
            return -1;
        }
        ++n;
    }
    return n;
}

int fl_opaque_gc(lua_State* L)
{
    FutoInBinaryValue* o = lua_touserdata(L, 1);
    if (o) {
        futoin_reset_binval(o);
    }
    return 0;
}

int fl_opaque_tostring(lua_State* L)
{
    FutoInBinaryValue* o = lua_touserdata(L, 1);
    if (!o || !o->type) {
        lua_pushliteral(L, "futoin_async.Opaque (passed on)");
    } else {
        char buf[80];
        snprintf(buf, sizeof(buf), "futoin_async.Opaque (type 0x%02x, %p)",
                 (unsigned)o->type->flags, o->p);
        lua_pushstring(L, buf);
    }
    return 1;
}
