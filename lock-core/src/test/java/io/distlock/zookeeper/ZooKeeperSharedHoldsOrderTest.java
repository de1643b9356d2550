package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The order of a line's nodes as their names say, where ZooKeeper's sequence counter (the parent's
 * cversion, a signed int counting child creations and deletions) passes 2147483647: the next names
 * end in "-2147483648", "-2147483647", ... (ZooKeeper's programmer's guide, "Sequence Nodes").
 */
class ZooKeeperSharedHoldsOrderTest {

	@Test
	void aNodeMadeAfterTheCounterWrappedNeverSortsBeforeAnEarlierOne() {
		// The holder's node was made when the counter stood at -2147483648, a writer's next.
		String holder = "w-inst1.a-" + String.format("%010d", Integer.MIN_VALUE);
		String later = "w-inst2.b-" + String.format("%010d", Integer.MIN_VALUE + 1);
		List<ZooKeeperSharedHolds.Node> line = new ArrayList<>();
		line.add(ZooKeeperSharedHolds.Node.parse(later));
		line.add(ZooKeeperSharedHolds.Node.parse(holder));
		Collections.sort(line);
		int laterIndex = line.indexOf(ZooKeeperSharedHolds.Node.parse(later));
		assertThat(ZooKeeperSharedHolds.holds(line, laterIndex))
			.as("a writer queued behind the write holder %s (%s) holds too", holder, line)
			.isFalse();
	}

	@Test
	void theNodeMadeRightAfterTheWrapSortsAfterTheLastOneBeforeIt() {
		String holder = "w-inst1.a-" + Integer.MAX_VALUE;
		String later = "w-inst2.b-" + Integer.MIN_VALUE;
		String downgrade = "r-inst1.c-" + Integer.MAX_VALUE + "d";
		List<ZooKeeperSharedHolds.Node> line = new ArrayList<>(List.of(ZooKeeperSharedHolds.Node.parse(later),
				ZooKeeperSharedHolds.Node.parse(downgrade), ZooKeeperSharedHolds.Node.parse(holder)));
		Collections.sort(line);
		assertThat(line).extracting(ZooKeeperSharedHolds.Node::name).containsExactly(holder, downgrade, later);
		assertThat(ZooKeeperSharedHolds.Node.parse("r-inst1.c-" + Integer.MIN_VALUE + "d").sequence())
			.as("a downgrade node after the wrap keeps its sign").isEqualTo(Integer.MIN_VALUE);
	}

}
