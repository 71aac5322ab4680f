package org.futoin.async;

/**
 * One event of a {@link Tool}'s flows, as {@link Tool#setHooks} hands it to
 * the listener (futoin/sys/hooks.h): what happened, to which root, when
 * (the tool's clock, ms), and the fields the event has; the others are
 * {@code null} / 0. Valid after the call (a copy).
 */
public final class HookEvent {
    /* The names come from the library (futoin_hook_name() and the others,
     * futoin/sys/hooks.h), as in every binding. */

    /** flow_started, flow_finished, step_entered, step_left, error_raised, error_handled, cancel,
     *  wait_begun, wait_ended, sync_acquired or sync_released. */
    public final String event;
    /** The root's id (rootId()). */
    public final long rootId;
    /** The tool's clock at the event, ms ({@link Tool#nowMillis()}). */
    public final long now;
    /** step_* and wait_*: the step's language, as async stacks name its origin. */
    public final String language;
    /** step_* and wait_*: the step's function, or null. */
    public final String function;
    /** step_* and wait_*: the step's source file, or null. */
    public final String file;
    /** step_* and wait_*: the line in {@link #file}, or 0. */
    public final int line;
    /** error_*: the code; flow_finished: the unhandled one. */
    public final String code;
    /** error_raised: error_info. */
    public final String info;
    /** flow_finished: success, error or cancelled. */
    public final String outcome;
    /** wait_*: timer, external, sync or foreign. */
    public final String waitKind;
    /** wait_*: when the step's timeout is due (tool ms), or 0. */
    public final long due;
    /** wait_* of a foreign wait: the step's language. */
    public final String waitLanguage;
    /** wait_* of a sync wait, sync_*: the object's address, or 0. */
    public final long sync;

    HookEvent(String event, long rootId, long now, String language, String function, String file, int line,
              String code, String info, String outcome, String waitKind, long due, String waitLanguage,
              long sync) {
        this.event = event;
        this.rootId = rootId;
        this.now = now;
        this.language = language;
        this.function = function;
        this.file = file;
        this.line = line;
        this.code = code;
        this.info = info;
        this.outcome = outcome;
        this.waitKind = waitKind;
        this.due = due;
        this.waitLanguage = waitLanguage;
        this.sync = sync;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(event).append(" r").append(rootId);
        if (function != null) {
            b.append(' ').append(function);
        }
        for (String s : new String[] {code, outcome, waitKind, waitLanguage}) {
            if (s != null) {
                b.append(' ').append(s);
            }
        }
        return b.append(" @").append(now).toString();
    }
}
