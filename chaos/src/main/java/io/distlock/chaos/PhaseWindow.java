package io.distlock.chaos;

/**
 * When one phase of a run happened, on the clients' clock ({@link System#nanoTime()}), and what a
 * correct lock must keep during it.
 *
 * @param name the phase's name, also the resource's phase key
 * @param fault what was done, for the report
 * @param start when the phase began (calm before the fault)
 * @param faultStart when the fault was injected
 * @param faultEnd when the fault was over (the server back, the client thawed)
 * @param end when the phase ended
 * @param exclusive whether holds of one key must never overlap in this phase: {@code false} only
 * where a holder is frozen past its lease, which no lease-based lock can prevent (fencing must
 * then reject its writes)
 * @param pausedClient the client frozen during the fault (e.g. {@code c1}), or {@code null}: its
 * own waits are not counted as overruns, since its threads did not run
 * @param problem why the fault did not happen as described (e.g. Redis came back without the data it
 * should have kept), or {@code null}
 */
public record PhaseWindow(String name, String fault, long start, long faultStart, long faultEnd, long end,
		boolean exclusive, String pausedClient, String problem) {

	/** @return whether {@code nanos} falls in this phase */
	boolean contains(long nanos) {
		return nanos >= this.start && nanos < this.end;
	}

}
