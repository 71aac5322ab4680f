// TypeScript declarations of futoin-async (the API of futoin-asyncsteps 2.5).

export type State = { (): State; error_info?: string; last_exception?: Error; async_stack?: Function[]; [key: string]: any };
export type ExecFunc = (as: AsyncStepsHandle, ...args: any[]) => void;
export type ErrorFunc = (as: AsyncStepsHandle, err: string) => void;
export type CancelFunc = (as: AsyncStepsHandle) => void;
export type LoopFunc = (as: AsyncStepsHandle) => void;
export type RepeatFunc = (as: AsyncStepsHandle, i: number) => void;
export type ForEachFunc = (as: AsyncStepsHandle, key: any, value: any) => void;

/** One frame of an async stack (polyglot flows): innermost first. */
export interface AsyncStackFrame {
    language: string;
    function: string | null;
    file: string | null;
    line: number;
}

/** A flow's W3C trace context as one step sees it (ids in lowercase hex). */
export interface TraceContext {
    traceId: string;
    /** this step's span (through a root: the span the flow goes on under) */
    spanId: string;
    /** the span this step runs under; null through a root */
    parentSpanId: string | null;
    /** trace flags (bit 0: sampled) */
    flags: number;
    /** "00-<traceId>-<spanId>-<flags>": send it on to a service this step calls */
    traceparent: string;
}

/** One event of a tool's flows (futoin/sys/hooks.h), for setHooks(). */
export interface HookEvent {
    event: 'flow_started' | 'flow_finished' | 'step_entered' | 'step_left' | 'error_raised'
        | 'error_handled' | 'cancel' | 'wait_begun' | 'wait_ended' | 'sync_acquired' | 'sync_released';
    rootId: number;
    /** the tool's clock, ms */
    now: number;
    /** step_* and wait_*: where the step came from, as async stacks name it */
    language: string | null;
    function: string | null;
    file: string | null;
    line: number;
    /** error_*: the code; flow_finished: the unhandled one */
    code: string | null;
    /** error_raised: error_info */
    info: string | null;
    /** flow_finished */
    outcome: 'success' | 'error' | 'cancelled' | null;
    /** wait_* */
    waitKind: 'timer' | 'external' | 'sync' | 'foreign' | null;
    /** wait_*: when the step's timeout is due (tool ms), or 0 */
    due: number;
    /** wait_* of a foreign wait: the step's language */
    waitLanguage: string | null;
    /** wait_* of a sync wait, sync_*: the object's address, or 0 */
    sync: number;
}

export interface ISync {
    sync(as: AsyncStepsHandle, func: ExecFunc, onerror?: ErrorFunc): void;
}

export interface AsyncStepsCommon {
    readonly state: State;
    add(func: ExecFunc, onerror?: ErrorFunc): this;
    parallel(onerror?: ErrorFunc): ParallelStep;
    sync(object: ISync, func: ExecFunc, onerror?: ErrorFunc): this;
    successStep(...args: any[]): this;
    await(promise: PromiseLike<any>, onerror?: ErrorFunc): this;
    loop(func: LoopFunc, label?: string): this;
    repeat(count: number, func: RepeatFunc, label?: string): this;
    forEach(map_or_list: any[] | Map<any, any> | object, func: ForEachFunc, label?: string): this;
    copyFrom(other: AsyncSteps): this;
    newInstance(): AsyncSteps;
    /** A step written in another language ("c", "python", "lua", "java",
     *  "javascript"): `func` of `module`, started in this process on first
     *  use; what cannot be had fails with InvalidRequest. */
    addForeign(language: string, module: string, func: string, onerror?: ErrorFunc): this;
    /** Makes `traceparent` (W3C) the trace context of this flow's root from
     *  now on (every language's steps, newInstance()); null clears. A bad
     *  value throws a TypeError saying why and changes nothing. */
    setTrace(traceparent: string | null): this;
    /** The trace context as this step (or root) sees it, or null. */
    trace(): TraceContext | null;
    /**
     * Throws a FutoInError whose message is the FTN12 code `name` (a
     * non-empty string without NUL, else a TypeError). From an external
     * event on a step that already ended (its timeout, a cancel: a late
     * completion) it returns false instead and changes nothing; on a root
     * it is refused with InternalError.
     */
    error(name: string, error_info?: string): never;
    isAsyncSteps(): true;
}

/** The handle a step function, error handler or loop body gets. */
export interface AsyncStepsHandle extends AsyncStepsCommon {
    /** true when taken; false for a late completion (the step had ended meanwhile). */
    success(...args: any[]): boolean;
    setTimeout(timeout_ms: number): this;
    setCancel(oncancel: CancelFunc): this;
    waitExternal(): this;
    break(label?: string): never;
    continue(label?: string): never;
    /** The async stack of the flow's last error, across languages. */
    asyncStack(): AsyncStackFrame[] | null;
}

export interface ParallelStep {
    add(func: ExecFunc, onerror?: ErrorFunc): this;
    isAsyncSteps(): true;
}

export interface AsyncToolType {
    callLater(func: () => void, timeout_ms?: number): object;
    cancelCall(handle: object): void;
    callImmediate(func: () => void): object;
    cancelImmediate(handle: object): void;
    now(): number;
    /** Every event of this tool's flows to `listener`; null clears. */
    setHooks(listener: ((ev: HookEvent) => void) | null): void;
    /** A live dump of this tool's roots (futoin_tool_dump()). */
    dump(): string;
}

/** The test tool, on the core's virtual time. */
export interface AsyncToolTestType extends AsyncToolType {
    nextEvent(): void;
    hasEvents(): boolean;
    getEvents(): Array<{ f: () => void; t: number }>;
    resetEvents(): void;
    run(): void;
    advance(ms: number): void;
    nextDue(): number | undefined;
}

/* The root's members of AsyncStepsCommon, declared once there: an
 * interface merged with the class (TypeScript's declaration merging). */
export interface AsyncSteps extends AsyncStepsCommon {}

export class AsyncSteps {
    constructor(state?: object | null, async_tool?: AsyncToolType | null);
    /** The async stack of the last error this root did not handle. */
    asyncStack(): AsyncStackFrame[] | null;
    execute(unhandled_error?: (code: string) => void): this;
    cancel(): this;
    promise(): Promise<any>;
}

export class Mutex implements ISync {
    constructor(max?: number, max_queue?: number | null);
    sync(as: AsyncStepsHandle, func: ExecFunc, onerror?: ErrorFunc): void;
}
export class Throttle implements ISync {
    constructor(max: number, period_ms?: number, max_queue?: number | null);
    sync(as: AsyncStepsHandle, func: ExecFunc, onerror?: ErrorFunc): void;
}
export class Limiter implements ISync {
    constructor(options?: { concurrent?: number; max_queue?: number; rate?: number; period_ms?: number; burst?: number });
    sync(as: AsyncStepsHandle, func: ExecFunc, onerror?: ErrorFunc): void;
}

export declare const Errors: { readonly [code: string]: string };

declare function $as(): AsyncSteps;
declare namespace $as {
    let ActiveAsyncTool: AsyncToolType;
    const AsyncTool: AsyncToolType;
    const AsyncToolTest: AsyncToolTestType;
    const isProduction: boolean;
    function installAsyncToolTest(install?: boolean): void;
    function assertAS(as: unknown): void;
    function testcase(func: ExecFunc, onerror?: ErrorFunc): (done: (err?: any) => void) => void;
    /** JavaScript records the core holds now (for leak checks). */
    function liveRefs(): number;
    /** An async stack as text, one "    at LANGUAGE FUNCTION (FILE:LINE)" a line. */
    function formatAsyncStack(frames: AsyncStackFrame[] | null): string;
    export { AsyncSteps, Mutex, Throttle, Limiter, Errors, Errors as FutoInError, ISync };
}
export default $as;
