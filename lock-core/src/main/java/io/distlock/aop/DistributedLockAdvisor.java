package io.distlock.aop;

import java.lang.reflect.Method;

import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;

/**
 * Applies the {@link DistributedLockInterceptor} to every method with a {@code @DistributedLock}.
 * Matching parses the annotation, so an invalid one fails while the bean is being proxied. The class
 * filter, asked once for each bean's class, is where an annotation that no proxy can apply (on a
 * private, static or final method) is reported, at WARN.
 *
 * <p>Its order must put it outside {@code @Transactional} (whose advisor has the lowest precedence
 * by default), so that the lock is held until the transaction has committed.
 */
public final class DistributedLockAdvisor extends AbstractPointcutAdvisor {

	private static final long serialVersionUID = 1L;

	private final transient DistributedLockInterceptor interceptor;

	private final transient Pointcut pointcut;

	/**
	 * @param attributes where annotations are found and parsed
	 * @param interceptor the advice
	 * @param order the advisor's order
	 */
	public DistributedLockAdvisor(LockAttributeSource attributes, DistributedLockInterceptor interceptor, int order) {
		this.interceptor = interceptor;
		StaticMethodMatcherPointcut pointcut = new StaticMethodMatcherPointcut() {
			@Override
			public boolean matches(Method method, Class<?> targetClass) {
				return attributes.find(method, targetClass).isPresent();
			}
		};
		UnreachableLockCheck unreachable = new UnreachableLockCheck();
		pointcut.setClassFilter(targetClass -> {
			unreachable.check(targetClass);
			return true;
		});
		this.pointcut = pointcut;
		setOrder(order);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

}
