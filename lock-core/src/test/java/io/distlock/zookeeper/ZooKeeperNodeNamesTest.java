package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.Test;

/**
 * Lock names map to valid znode names, and different names never to the same one.
 */
class ZooKeeperNodeNamesTest {

	private static final String LONG = "x".repeat(300);

	@Test
	void awkwardNamesMapToDistinctValidNodeNames() {
		List<String> names = List.of("order:42", "a/b", "a%2Fb", "a%252Fb", ".", "..", "%2E", " ", "\u0000", "\u0001",
				"\uFFFF", "\uD83D\uDD12 lock", "über", "~", "%7E", "a~b", LONG, LONG + "y", LONG.substring(1) + "y",
				"x".repeat(200), "x".repeat(201), "zookeeper", "-", "_", "A", "a");
		Map<String, String> seen = new HashMap<>();
		for (String name : names) {
			String node = ZooKeeperNodeNames.nodeName(name);
			PathUtils.validatePath("/distlock/" + node);
			assertThat(node).doesNotContain("/").isNotIn(".", "..");
			assertThat(node.length()).isLessThanOrEqualTo(ZooKeeperNodeNames.MAX_PLAIN + 65);
			assertThat(seen.put(node, name)).as("%s and %s share node %s", seen.get(node), name, node).isNull();
		}
		assertThat(ZooKeeperNodeNames.nodeName("order:42")).isEqualTo("order:42");
	}

	@Test
	void longNamesAreCutAndHashedWhileShortOnesNeverContainTheHashMark() {
		assertThat(ZooKeeperNodeNames.nodeName(LONG)).startsWith("x".repeat(120) + "~").hasSize(120 + 1 + 64);
		assertThat(ZooKeeperNodeNames.nodeName("a~b")).doesNotContain("~");
	}

}
