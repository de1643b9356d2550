package io.distlock.benchmarks;

import io.distlock.annotation.DistributedLock;

/**
 * The annotation path of scenario 4: the same lock as the programmatic loop, through the aspect and
 * a SpEL key over the argument.
 */
public class AnnotatedService {

	/**
	 * @param key the lock's name
	 * @return a value, so the call cannot be optimised away
	 */
	@DistributedLock(key = "#key")
	public int locked(String key) {
		return key.length();
	}

}
