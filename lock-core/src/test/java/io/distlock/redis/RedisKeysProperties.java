package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import io.distlock.HoldKind;
import io.distlock.InvalidLockSettingException;
import io.distlock.testing.HostileText;

/**
 * The Redis key layout of {@link RedisKeys} under hostile lock names, on a single server and on a
 * Cluster: different names never share a key, and every key one script touches lies in one slot.
 */
class RedisKeysProperties {

	private static final RedisKeys SINGLE = new RedisKeys("distlock", false);

	private static final RedisKeys CLUSTER = new RedisKeys("distlock", true);

	private static final List<HoldKind.Family> SHARED_FAMILIES = List.of(HoldKind.Family.READ_WRITE,
			HoldKind.Family.SEMAPHORE);

	@Property(tries = 300)
	void differentNamesHaveDisjointKeys(@ForAll("names") String a, @ForAll("names") String b) {
		if (a.equals(b)) {
			return;
		}
		for (RedisKeys keys : List.of(SINGLE, CLUSTER)) {
			Set<String> shared = new HashSet<>(allKeys(keys, a));
			shared.retainAll(allKeys(keys, b));
			assertThat(shared).as("keys shared by '%s' and '%s' (cluster: %s)", a, b, keys.cluster()).isEmpty();
		}
	}

	/**
	 * Random pairs of names almost never collide by chance, so the other name is derived from the
	 * keys themselves: every stretch of a key between a separator ('{' or ':') and a closing one ('}',
	 * ':' or the end) is tried as a name, which is how a colliding name would have to look.
	 */
	@Property(tries = 300)
	void noOtherNameReachesAKeyOfThisOne(@ForAll("shortNames") String name) {
		for (RedisKeys keys : List.of(SINGLE, CLUSTER)) {
			Set<String> own = allKeys(keys, name);
			for (String candidate : namesInside(own)) {
				if (candidate.equals(name) || candidate.isBlank()) {
					continue;
				}
				Set<String> shared = new HashSet<>(allKeys(keys, candidate));
				shared.retainAll(own);
				assertThat(shared).as("keys of '%s' that lock '%s' uses too (cluster: %s)", name, candidate, keys.cluster())
					.isEmpty();
				assertThat(allKeys(keys, candidate)).doesNotContain(keys.fencingCounter(name), keys.lastSaveSeen(name),
						keys.replicationIdSeen(name));
			}
		}
	}

	@Property(tries = 300)
	void everyKeyOfALockLiesInItsClusterSlot(@ForAll("names") String name) {
		int slot = CLUSTER.slot(name);
		Set<String> lockKeys = new LinkedHashSet<>(CLUSTER.scriptKeys(name));
		lockKeys.addAll(CLUSTER.releaseKeys(name, "client-1:42"));
		for (String key : lockKeys) {
			assertThat(ClusterSlotTags.slot(key)).as("slot of '%s', a key of lock '%s'", key, name).isEqualTo(slot);
		}
	}

	/**
	 * A read-write lock's or semaphore's keys all lie in its state hash's slot, the fencing counter
	 * included (the one of that slot, not of the exclusive lock's), also for a name starting with '}'.
	 */
	@Property(tries = 300)
	void everyKeyOfAReadWriteLockOrSemaphoreLiesInItsStatesClusterSlot(@ForAll("names") String name) {
		for (HoldKind.Family family : SHARED_FAMILIES) {
			RedisKeys.SharedKeys shared = CLUSTER.shared(family, name);
			int slot = ClusterSlotTags.slot(shared.state());
			assertThat(shared.slot()).isEqualTo(slot);
			Set<String> keys = new LinkedHashSet<>(shared.acquireKeys());
			keys.addAll(shared.releaseKeys("client-1:42"));
			keys.addAll(shared.tokenKeys());
			for (String key : keys) {
				assertThat(ClusterSlotTags.slot(key)).as("slot of '%s', a key of the %s '%s'", key, family, name)
					.isEqualTo(slot);
			}
			assertThat(SINGLE.shared(family, name).counter()).isEqualTo("distlock:fencing");
		}
	}

	/**
	 * The keys the scripts are sent, encoded once per name, are the keys above in UTF-8 (names with
	 * unpaired surrogates, which UTF-8 cannot carry, never reach here), also after another
	 * name took a name's slot in the table; and the lock's channel is its key followed by
	 * {@code :released}, as {@code release.lua} derives it instead of being sent it.
	 */
	@Property(tries = 300)
	void encodedKeysAreTheKeysAndTheChannelFollowsTheLockKey(@ForAll("names") String a, @ForAll("names") String b) {
		for (RedisKeys keys : List.of(SINGLE, CLUSTER)) {
			EncodedKeys encoded = new EncodedKeys(keys);
			for (String name : List.of(a, b, a, b)) {
				assertThat(encoded.acquireKeys(name)).isDeepEqualTo(ScriptArguments.text(keys.scriptKeys(name)));
				assertThat(encoded.releaseKeys(name, ScriptArguments.text("client-1:42")))
					.isDeepEqualTo(ScriptArguments.text(keys.releaseKeys(name, "client-1:42")));
				assertThat(encoded.tokenKeys(name)).isDeepEqualTo(ScriptArguments.text(keys.tokenKeys(name)));
				assertThat(encoded.lockKey(name)).isEqualTo(ScriptArguments.text(keys.lock(name)));
				assertThat(keys.releaseChannel(name)).isEqualTo(keys.lock(name) + ":released");
			}
		}
	}

	/**
	 * A name's release keys are kept for the owner that released it last: owners taking turns on
	 * one name (a contended lock), and an owner's id encoded anew, each get their own marker.
	 */
	@Property(tries = 200)
	void releaseKeysNameTheOwnerReleasingWhoeverReleasedBefore(@ForAll("names") String name,
			@ForAll("names") String ownerA, @ForAll("names") String ownerB) {
		EncodedKeys encoded = new EncodedKeys(SINGLE);
		for (String owner : List.of(ownerA, ownerB, ownerB, ownerA, ownerB)) {
			assertThat(encoded.releaseKeys(name, ScriptArguments.text(owner)))
				.isDeepEqualTo(ScriptArguments.text(SINGLE.releaseKeys(name, owner)));
		}
	}

	/** An attempt id's bytes are kept per thread for its release: ids taking turns each get their own. */
	@Property(tries = 200)
	void attemptIdsAreEncodedAsTheyAreWhicheverCameBefore(@ForAll("names") String a, @ForAll("names") String b) {
		ScriptArguments arguments = new ScriptArguments();
		for (String attempt : List.of(a, b, b, a, new String(a))) {
			assertThat(arguments.attempt(attempt)).isEqualTo(ScriptArguments.text(attempt));
		}
		assertThat(arguments.attempt(null)).isEmpty();
		assertThat(arguments.attempt("")).isEmpty();
	}

	@Property(tries = 200)
	void aPrefixWithAHashTagOrNothingInItIsRefused(@ForAll("prefixes") String prefix) {
		if (prefix.isBlank() || prefix.contains("{") || prefix.contains("}")) {
			assertThatThrownBy(() -> new RedisKeys(prefix, true)).isInstanceOf(IllegalArgumentException.class)
				.isInstanceOf(InvalidLockSettingException.class)
				.hasMessageContaining("keyPrefix")
				.hasMessageContaining("'" + prefix + "'");
		}
		else {
			// Two applications sharing a Redis must not share a lock: the prefix ends where the first '{' is.
			RedisKeys mine = new RedisKeys(prefix, false);
			RedisKeys theirs = new RedisKeys(prefix + "x", false);
			assertThat(mine.lock("n")).isNotEqualTo(theirs.lock("n"));
			assertThat(mine.lock("x:{n}")).isNotEqualTo(theirs.lock("n"));
		}
	}

	@Provide
	Arbitrary<String> names() {
		return HostileText.any().filter(name -> !name.isBlank());
	}

	/** Hostile fragments, and names made of few characters only, among them the hash tag's braces. */
	@Provide
	Arbitrary<String> shortNames() {
		Arbitrary<String> braces = Arbitraries.strings().withChars("{}:a0").ofMinLength(1).ofMaxLength(8);
		return Arbitraries.oneOf(HostileText.fragments(), braces).filter(name -> !name.isBlank());
	}

	@Provide
	Arbitrary<String> prefixes() {
		return Arbitraries.oneOf(HostileText.fragments(), Arbitraries.of("", " ", "\t", "app", "app:locks", "a{b", "a}b"));
	}

	/**
	 * Every key a script of the lock, the read-write lock or the semaphore of this name touches:
	 * acquire's, release's and the abandon script's, and the shared scripts'.
	 */
	private static Set<String> allKeys(RedisKeys keys, String name) {
		Set<String> all = new LinkedHashSet<>(keys.scriptKeys(name));
		all.addAll(keys.releaseKeys(name, "client-1:42"));
		all.add(keys.lock(name));
		// The fencing counter and the last save and replication id seen beside it are shared on
		// purpose: one for the key space, or one per slot.
		all.remove(keys.fencingCounter(name));
		all.remove(keys.lastSaveSeen(name));
		all.remove(keys.replicationIdSeen(name));
		for (HoldKind.Family family : SHARED_FAMILIES) {
			RedisKeys.SharedKeys shared = keys.shared(family, name);
			all.addAll(shared.acquireKeys());
			all.addAll(shared.releaseKeys("client-1:42"));
			all.remove(shared.counter());
			all.remove(shared.lastSaveSeen());
			all.remove(shared.replicationIdSeen());
		}
		return all;
	}

	private static List<String> namesInside(Set<String> keys) {
		List<String> names = new ArrayList<>();
		for (String key : keys) {
			for (int start = 0; start < key.length(); start++) {
				char opening = key.charAt(start);
				if (opening != '{' && opening != ':') {
					continue;
				}
				for (int end = start + 1; end <= key.length(); end++) {
					if (end == key.length() || key.charAt(end) == '}' || key.charAt(end) == ':') {
						names.add(key.substring(start + 1, end));
					}
				}
			}
		}
		return names;
	}

}
