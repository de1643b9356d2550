package io.distlock.core;

/** For tests in other packages: what a registry's engine knows that its public face does not show. */
public final class EngineProbe {

	private EngineProbe() {
	}

	/**
	 * @param registry a registry
	 * @return the owner id of the calling thread in that registry
	 */
	public static String currentOwner(BackendLockRegistry registry) {
		return registry.engine().currentOwner();
	}

	/**
	 * @param registry a registry
	 * @return how many lock names that registry's threads wait on right now
	 */
	public static int waitingLockNames(BackendLockRegistry registry) {
		return registry.engine().waitingLockNames();
	}

	/**
	 * @param registry a registry
	 * @param name a lock the calling thread holds through it
	 * @return how long the engine believes the backend keeps that hold without another renewal
	 */
	public static java.time.Duration confirmedLeaseLeft(BackendLockRegistry registry, String name) {
		LockEngine engine = registry.engine();
		Hold hold = engine.holds.get(engine.holds.key(name, io.distlock.HoldKind.EXCLUSIVE, engine.currentOwner()));
		return java.time.Duration.ofNanos(hold.confirmedNanosLeft(System.nanoTime()));
	}

}
