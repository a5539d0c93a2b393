//! Whose rows a report may hold: an admin's every course, an instructor's only the courses
//! they teach.

use crate::auth::{authorize, Action, Caller, Denied};
use crate::store::Role;
use crate::CourseId;

/// The courses a report for `caller` covers: `None` for every course (admins only),
/// otherwise the one asked for or, when none is, every course the caller teaches.
pub fn report_scope(caller: &Caller, course: Option<CourseId>) -> Result<Option<Vec<CourseId>>, Denied> {
    authorize(caller, &Action::ViewReports)?;
    if let Some(course) = course {
        authorize(caller, &Action::ReportOn(course))?;
        return Ok(Some(vec![course]));
    }
    match caller {
        Caller::User { is_admin: true, .. } => Ok(None),
        Caller::User { memberships, .. } => Ok(Some(
            memberships
                .iter()
                .filter(|(_, role)| *role == Role::Instructor)
                .map(|(id, _)| *id)
                .collect(),
        )),
        Caller::Anonymous => Err(Denied::NotLoggedIn),
    }
}

/// The report form's fields as typed; every one may be empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportForm {
    pub period: String,
    pub from: String,
    pub to: String,
    pub group: String,
    /// A course code, or empty for every course the caller may see.
    pub course: String,
}

/// The report `form` asks for, as `caller` may see it, at `now_ms`.
pub async fn report_for(
    store: &crate::store::Store,
    caller: &Caller,
    form: &ReportForm,
    now_ms: i64,
) -> Result<super::UsageReport, crate::CoreError> {
    authorize(caller, &Action::ViewReports)?;
    let query = super::ReportQuery::parse(&form.period, &form.from, &form.to, &form.group, now_ms)?;
    let course = match form.course.trim() {
        "" => None,
        code => match store.course_by_code(code).await? {
            Some(course) => Some(course.id),
            None => {
                return Err(crate::CoreError::NotFound(format!(
                    "There is no course {}.",
                    code.chars().take(40).collect::<String>()
                )))
            }
        },
    };
    let courses = report_scope(caller, course)?;
    let mut report = super::usage_report(store, &query, courses.as_deref(), now_ms).await?;
    if authorize(caller, &Action::ViewGpus).is_err() {
        hide_gpu_identities(&mut report);
    }
    Ok(report)
}

/// GPU UUIDs are for administrators: others see `GPU 1`, `GPU 2`, … numbered in the
/// order of the UUIDs, the same in the rows and the chart.
fn hide_gpu_identities(report: &mut super::UsageReport) {
    let mut uuids: Vec<String> = report.by_gpu.iter().map(|s| s.name.clone()).collect();
    uuids.sort();
    let name = |uuid: &str| match uuids.iter().position(|u| u == uuid) {
        Some(i) => format!("GPU {}", i + 1),
        None => "GPU".to_string(),
    };
    for series in &mut report.by_gpu {
        series.name = name(&series.name);
    }
    if report.query.group == super::GroupBy::Gpu {
        for row in &mut report.rows {
            row.key = name(&row.key);
        }
    }
}
